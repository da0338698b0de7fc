import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { outputMatching } from './child-process';

/** `npm start`'s entry point, compiled (dist/local/main.js). */
const MAIN = path.resolve(__dirname, '../../local/main.js');

/** Inherited settings dropped on every start (unless `set` gives them), so the host runs on its embedded defaults. */
const EMBEDDED_DEFAULTS = ['REDIS_URL', 'MODEL_DIR'];

/** Settings of {@link startLocalHost}. */
export interface LocalHostSettings {
  /** Environment variables set on top of the inherited ones (after `PORT=0`). */
  readonly set?: Readonly<Record<string, string>>;
  /** Environment variables removed as well as `REDIS_URL` and `MODEL_DIR`. */
  readonly unset?: readonly string[];
  /** Bound of the wait for the "Listening on" line, ms. Default 60 s. */
  readonly ms?: number;
}

/** A local host started by {@link startLocalHost}, listening. */
export interface LocalHost {
  /** The host's process: the caller stops it (`stopChild`, or SIGKILL on a failed assertion). */
  readonly child: ChildProcess;
  /** The API base URL from the "Listening on" line (`http://127.0.0.1:PORT/api`). */
  readonly url: string;
  /** Everything the host has printed so far, stdout and stderr as they came. */
  output(): string;
}

/**
 * Starts the local host as `npm start` does (`node dist/local/main.js`) on a free port, with the test's
 * environment less `REDIS_URL` and `MODEL_DIR` (and `unset`), plus `set`; collects its stdout and stderr and waits
 * (bounded, see {@link outputMatching}) for its "Listening on" line. If that line does not come, kills the
 * host (SIGKILL) and fails naming the line awaited, with the output so far.
 */
export async function startLocalHost(settings: LocalHostSettings = {}): Promise<LocalHost> {
  // npm start keeps the rollout pointers in ROLLOUT_STATE_DIR (default `.data/rollout`): each start gets its own
  // folder in the run's temporary folder unless the test passes one (to restart on the same state)
  const stateDir = mkdtempSync(path.join(process.env['DECISION_LOG_DIR'] ?? os.tmpdir(), 'rollout-'));
  // and its own embedded bus journal (BUS_JOURNAL_DIR, default `.data/bus`), unless the test passes one
  const busDir = mkdtempSync(path.join(process.env['DECISION_LOG_DIR'] ?? os.tmpdir(), 'bus-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    ROLLOUT_STATE_DIR: stateDir,
    BUS_JOURNAL_DIR: busDir,
    ...settings.set,
  };
  for (const k of EMBEDDED_DEFAULTS) if (settings.set?.[k] === undefined) delete env[k];
  for (const k of settings.unset ?? []) delete env[k];
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const output = (): string => out;
  try {
    const url = await outputMatching(
      child,
      output,
      /Listening on (http:\/\/127\.0\.0\.1:\d+\/api)/,
      'the "Listening on" line',
      settings.ms,
    );
    return { child, url, output };
  } catch (err) {
    child.kill('SIGKILL'); // a host that never listens must not outlive the test
    throw err;
  }
}

/**
 * `npm start` on the case queue's embedded defaults (PGlite, the development identity) with its data in `dir`
 * (`pglite/`, `decisions/`), the decision log and the case writer flushed every 50 ms; `set` adds settings.
 */
export function startCaseHost(dir: string, set: Readonly<Record<string, string>> = {}): Promise<LocalHost> {
  return startLocalHost({
    set: {
      PGLITE_DIR: path.join(dir, 'pglite'),
      DECISION_LOG_DIR: path.join(dir, 'decisions'),
      DECISION_LOG_FLUSH_MS: '50',
      CASE_FLUSH_MS: '50',
      ...set,
    },
    unset: ['CASE_STORE', 'IDENTITY_MODE'],
    ms: 120_000,
  });
}
