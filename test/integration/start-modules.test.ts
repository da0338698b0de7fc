/**
 * `npm start` on embedded defaults loads only what it uses: the Azure SDK clients, ioredis, the OpenAI SDK and the
 * tracing SDK load when their feature is configured, not on every start (they were about half of the host's
 * start-up time). The second case turns two of those features on and checks that their packages do load, so the
 * first one cannot pass by not seeing anything.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { eventually, within } from '../support/eventually';

const MAIN = path.resolve(__dirname, '../../local/main.js');

/** Packages that only a configured feature needs (Redis, Key Vault, Entra, Service Bus, blob storage, LLM, tracing). */
const FEATURE_PACKAGES = [
  'ioredis',
  'pg',
  '@azure/identity',
  '@azure/keyvault-secrets',
  '@azure/service-bus',
  '@azure/storage-blob',
  'openai',
  'cockatiel',
  'applicationinsights',
  '@opentelemetry/core',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/sdk-trace-node',
];

/**
 * Runs the local host with `extra` settings until `GET /api/health/ready` answers 200, stops it with SIGTERM and
 * returns the npm packages it had loaded (read from the module cache as the process exits).
 */
async function loadedPackages(extra: Record<string, string>): Promise<string[]> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    PORT: '0',
    // the embedded case database of this run (scripts/run-tests.mjs), never the checkout's .data/
    ...(process.env['PGLITE_DIR'] === undefined ? {} : { PGLITE_DIR: process.env['PGLITE_DIR'] }),
    // the rollout pointers of this start, never the checkout's .data/rollout
    ROLLOUT_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), 'start-modules-rollout-')),
    ...extra,
  };
  const script = `
    process.on('exit', () => {
      const pkgs = new Set();
      for (const k of Object.keys(require.cache)) {
        const m = /node_modules[/]((?:@[^/]+[/])?[^/]+)[/]/.exec(k);
        if (m) pkgs.add(m[1]);
      }
      require('fs').writeSync(2, 'LOADED ' + JSON.stringify([...pkgs].sort()) + '\\n');
    });
    require(${JSON.stringify(MAIN)});`;
  const child = spawn(process.execPath, ['-e', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = once(child, 'exit');
  try {
    const listening = await eventually(
      () => Promise.resolve(/Listening on (http:\/\/127\.0\.0\.1:\d+\/api)/.exec(out)?.[1]),
      (url) => url !== undefined || child.exitCode !== null,
      'the "Listening on" line',
      60_000,
    );
    assert.ok(listening !== undefined, `the host exited before listening:\n${out}\n${err}`);
    await eventually(
      () => fetch(`${listening}/health/ready`).then((r) => r.status),
      (s) => s === 200,
      'GET /api/health/ready 200 (model loaded, sample inference passed)',
    );
  } catch (e) {
    child.kill('SIGKILL'); // never leave the host running behind a failed assertion
    throw e;
  }
  child.kill('SIGTERM');
  const [code] = (await within(exited, 'exit after SIGTERM')) as [number | null];
  assert.equal(code, 0, err);
  const line = err.split('\n').find((l) => l.startsWith('LOADED '));
  assert.ok(line !== undefined, `no LOADED line on stderr:\n${err}`);
  return JSON.parse(line.slice('LOADED '.length)) as string[];
}

describe('npm start: modules loaded at start-up', () => {
  it('on embedded defaults, loads no package of a feature that is off', async () => {
    const loaded = await loadedPackages({});
    for (const used of ['onnxruntime-node', 'zod', '@azure/functions', '@opentelemetry/api'])
      assert.ok(loaded.includes(used), `${used} is used on every start: ${loaded.join(', ')}`);
    assert.deepEqual(
      FEATURE_PACKAGES.filter((p) => loaded.includes(p)),
      [],
      'loaded although their feature is off',
    );
  });

  it('loads the tracing SDK and the OpenAI SDK once tracing and escalation are configured', async () => {
    const loaded = await loadedPackages({
      OTEL_TRACES_EXPORTER: 'console',
      AZURE_OPENAI_ENDPOINT: 'http://127.0.0.1:9',
      AZURE_OPENAI_DEPLOYMENT: 'gpt-4o-mini',
      AZURE_OPENAI_API_KEY: 'test-key-not-a-secret',
    });
    for (const p of ['@opentelemetry/sdk-trace-base', '@opentelemetry/core', 'openai', 'cockatiel'])
      assert.ok(loaded.includes(p), `${p} loads when its feature is on: ${loaded.join(', ')}`);
  });
});
