/**
 * The tests' one host starter, {@link startLocalHost}: `npm start` in a child process, or (with `inProcess`) the
 * local Functions host in the test's own process. The other starters here are presets of it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { InProcessBus } from '../../local/in-process-bus';
import { appRoot } from '../../lib/config/app-root';
import { LocalHost as InProcessHost, type LocalHostOptions } from '../../local/host';
import { hostJsonHttp } from '../../local/host-json';
import { ServiceBusEmulator } from '../../local/service-bus-emulator';
import { outputMatching } from './child-process';

export { InProcessHost };

/** Compiled function modules (dist/functions/*.js), as package.json `main` names them. */
export async function functionModules(): Promise<string[]> {
  const dir = path.resolve(__dirname, '../../functions');
  return (await fs.readdir(dir)).filter((f) => f.endsWith('.js')).map((f) => path.join(dir, f));
}

/** The compiled modules of the named functions (`score` → dist/functions/score.js). */
export function functionsNamed(names: readonly string[]): string[] {
  return names.map((m) => path.resolve(__dirname, '../../functions', `${m}.js`));
}

/** Settings of a host started in the test's process (`startLocalHost({ inProcess: … })`). */
export interface InProcessSettings {
  /** The function modules served (default: all of them, {@link functionModules}). */
  readonly modules?: readonly string[];
  /** The host's log lines (default: dropped). */
  readonly log?: (line: string) => void;
  /** host.json's HTTP settings as `npm start` has them (route prefix, throttles); default: the host's own. */
  readonly hostJson?: boolean;
  /** Extra routes served before the functions' (the embedded Service Bus's `/local/…` routes). */
  readonly extraRoutes?: LocalHostOptions['extraRoutes'];
}

/** `npm start`'s entry point, compiled (dist/local/main.js). */
const MAIN = path.resolve(__dirname, '../../local/main.js');

/** Inherited settings dropped on every start (unless `set` gives them), so the host runs on its embedded defaults. */
const EMBEDDED_DEFAULTS = ['REDIS_URL', 'MODEL_DIR'];

/** Settings of {@link startLocalHost}. */
export interface LocalHostSettings {
  /**
   * Environment variables set on top of the inherited ones (after `PORT=0`). In process: set on `process.env`
   * before the host starts (the engine reads them once, on first use).
   */
  readonly set?: Readonly<Record<string, string>>;
  /** Environment variables removed as well as `REDIS_URL` and `MODEL_DIR` (in process: only the listed ones). */
  readonly unset?: readonly string[];
  /** Bound of the wait for the "Listening on" line, ms (`npm start` only). Default 60 s. */
  readonly ms?: number;
}

/** A local host started by {@link startLocalHost} as `npm start`, listening. */
export interface LocalHost {
  /** The host's process: the caller stops it (`stopChild`, or SIGKILL on a failed assertion). */
  readonly child: ChildProcess;
  /** The API base URL from the "Listening on" line (`http://127.0.0.1:PORT/api`). */
  readonly url: string;
  /** Everything the host has printed so far, stdout and stderr as they came. */
  output(): string;
}

/**
 * With `inProcess`: starts the local Functions host in this process on a free port, serving the app's compiled
 * functions, after applying `set` and `unset` to `process.env`; the caller disposes it.
 */
export function startLocalHost(
  settings: LocalHostSettings & { readonly inProcess: InProcessSettings },
): Promise<InProcessHost>;
/**
 * Starts the local host as `npm start` does (`node dist/local/main.js`) on a free port, with the test's
 * environment less `REDIS_URL` and `MODEL_DIR` (and `unset`), plus `set`; collects its stdout and stderr and waits
 * (bounded, see {@link outputMatching}) for its "Listening on" line. If that line does not come, kills the
 * host (SIGKILL) and fails naming the line awaited, with the output so far.
 */
export function startLocalHost(settings?: LocalHostSettings): Promise<LocalHost>;
export function startLocalHost(
  settings: LocalHostSettings & { readonly inProcess?: InProcessSettings } = {},
): Promise<LocalHost | InProcessHost> {
  return settings.inProcess === undefined ? startChild(settings) : startInProcess(settings, settings.inProcess);
}

async function startInProcess(settings: LocalHostSettings, opts: InProcessSettings): Promise<InProcessHost> {
  Object.assign(process.env, settings.set);
  for (const k of settings.unset ?? []) delete process.env[k];
  const http = opts.hostJson === true ? hostJsonHttp(appRoot()) : undefined;
  return InProcessHost.create({
    port: 0,
    appModules: [...(opts.modules ?? (await functionModules()))],
    log: opts.log ?? (() => undefined),
    ...(http === undefined
      ? {}
      : {
          routePrefix: http.routePrefix,
          throttles: {
            maxConcurrentRequests: http.maxConcurrentRequests,
            maxOutstandingRequests: http.maxOutstandingRequests,
          },
        }),
    ...(opts.extraRoutes === undefined ? {} : { extraRoutes: opts.extraRoutes }),
  });
}

async function startChild(settings: LocalHostSettings): Promise<LocalHost> {
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

/**
 * In process, the app's real functions on a free port. Set `process.env` before calling: the engine reads its
 * configuration once, on first use.
 */
export function startHost(log?: (line: string) => void): Promise<InProcessHost> {
  return startLocalHost({ inProcess: log === undefined ? {} : { log } });
}

/** The compiled function modules the scoring tests serve (explicit, so unrelated triggers stay out). */
export const SCORING_MODULES = functionsNamed(['hooks', 'health', 'score', 'score-batch']);

/**
 * In process, the app's scoring functions ({@link SCORING_MODULES}) with host.json's HTTP settings as `npm start`
 * has them. Settings come from `process.env` (read once by `sharedEngine()`): set them before calling. One per
 * process.
 */
export function startServiceHost(): Promise<InProcessHost> {
  return startLocalHost({ inProcess: { modules: SCORING_MODULES, hostJson: true } });
}

/** Settings of {@link startHostWithBus}. */
export interface HostWithBusOptions {
  /** The embedded bus the test's publisher writes to. */
  readonly bus: InProcessBus;
  /** `REDIS_KEY_PREFIX` of the test's Redis (`testRedis().prefix`). */
  readonly redisPrefix: string;
  /** Deliveries before a message is dead-lettered. */
  readonly maxDeliveryCount: number;
  /** Most messages per call of the batch trigger (host.json `maxMessageBatchSize`). */
  readonly maxMessageBatchSize: number;
}

/**
 * In process, the app's real functions fed by an embedded Service Bus on `bus` (which also serves its `/local/…`
 * routes), with `process.env` set to: Redis at 127.0.0.1:6379 under `redisPrefix`, queue `payments`, topic
 * `risk-completed`, rejected queue `scoring-rejected`, and no background readiness probe
 * (`HEALTH_PROBE_INTERVAL_SEC=3600`, so only the test's requests run the model). Call it after
 * `configureSharedEngine`; the caller stops the bus, then disposes the host.
 */
export async function startHostWithBus(
  opts: HostWithBusOptions,
): Promise<{ host: InProcessHost; sb: ServiceBusEmulator }> {
  const sb = new ServiceBusEmulator({
    bus: opts.bus,
    maxDeliveryCount: opts.maxDeliveryCount,
    maxMessageBatchSize: opts.maxMessageBatchSize,
  });
  const host = await startLocalHost({
    set: {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: opts.redisPrefix,
      SCORING_QUEUE: 'payments',
      RESULTS_TOPIC: 'risk-completed',
      REJECTED_QUEUE: 'scoring-rejected',
      HEALTH_PROBE_INTERVAL_SEC: '3600',
    },
    inProcess: { extraRoutes: sb.route },
  });
  sb.start(host);
  return { host, sb };
}
