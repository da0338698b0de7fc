/**
 * `loadConfig` for tests: the decision log (and its labels) go to a temporary folder of this test process,
 * removed when it exits, never to the checkout's `.data/` (unless the test names its own DECISION_LOG_DIR).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadConfig, type Config } from '../../lib/config/config';

let dataDir: string | undefined;

/** This process's temporary data folder (made on first use, removed at exit). */
export function testDataDir(): string {
  if (dataDir === undefined) {
    const dir = mkdtempSync(path.join(tmpdir(), 'test-data-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    dataDir = dir;
  }
  return dataDir;
}

/** {@link loadConfig} of `env`, with DECISION_LOG_DIR in {@link testDataDir} unless `env` sets it. */
export function testConfig(env: Readonly<Record<string, string | undefined>>): Config {
  return loadConfig({ ...env, DECISION_LOG_DIR: env['DECISION_LOG_DIR'] ?? testDataDir() });
}
