/**
 * The overload scenario of `npm run bench`: goodput under a closed loop far above capacity.
 *
 * 1. The service's own maximum: `MAX_CONNECTIONS` (64) closed-loop connections.
 * 2. Overload: `OVERLOAD_CONNECTIONS` (1 000) closed-loop connections for 10 s (3 s with `--quick`).
 *
 * Reported as `<model>.overload` (`connections`, `goodput_rps` = 200s per second, `shed` = 503s,
 * `p99_accepted_ms`, the 503s' own latency, timeouts) and `<model>.ratios.overload_goodput_vs_max`
 * (target ≥ 0.8). Standalone: `node dist/bench/overload.js [small|heavy] [--quick]` (tuning aid).
 *
 * All latencies are the load generator's. autocannon ignores `Retry-After`: a refused connection sends
 * again at once. The local host applies host.json's HTTP throttles as the Functions host does: past
 * `maxConcurrentRequests` requests wait in the host (not counted in their deadline, which starts in the
 * app), past `maxOutstandingRequests` they get 429 (counted in `other`).
 */
import autocannon from 'autocannon';
import type { ServerChild } from './children';
import { percentile } from '../test/support/load/percentile';

/** Closed-loop connections of the "maximum" run. */
export const MAX_CONNECTIONS = 64;
/** Closed-loop connections of the overload run. */
export const OVERLOAD_CONNECTIONS = 1000;

/** What one closed-loop run measured (latencies in ms, from the load generator). */
export interface ClosedLoopFigures {
  readonly connections: number;
  readonly duration_s: number;
  /** 200 answers per second. */
  readonly goodput_rps: number;
  /** 503 answers (shed). */
  readonly shed: number;
  /** Answers other than 200 and 503. */
  readonly other: number;
  /** Requests that got no answer within the client timeout, plus connection errors. */
  readonly timeouts: number;
  /** Timeouts as a share of all requests sent, %. */
  readonly timeout_pct: number;
  readonly p50_accepted_ms: number;
  readonly p99_accepted_ms: number;
  readonly p50_shed_ms: number;
  readonly p99_shed_ms: number;
  /** 503s by problem `code` (`overloaded` from admission, `deadline_exceeded` from the batcher, ...). */
  readonly shed_by_code: Readonly<Record<string, number>>;
  /** `Retry-After` was present on every 503. */
  readonly retry_after_on_every_503: boolean;
}

/** The overload section of one model's figures. */
export interface OverloadFigures {
  readonly max: ClosedLoopFigures;
  readonly overload: ClosedLoopFigures;
  readonly overload_goodput_vs_max: number;
  /** The engine's admission counters after the overload run (`GET /__bench/admission`). */
  readonly admission_after: unknown;
}

async function admissionStats(url: string): Promise<unknown> {
  try {
    const res = await fetch(`${url}/__bench/admission`, { signal: AbortSignal.timeout(5000) });
    return res.ok ? await res.json() : null;
  } catch {
    return null;
  }
}

/** {@link percentile}, ms to 1 decimal. */
function pct(sorted: readonly number[], p: number): number {
  return Math.round(percentile(sorted, p) * 10) / 10;
}

/** One closed-loop run against `POST url/api/score`. */
export async function closedLoop(
  url: string,
  body: () => string,
  connections: number,
  durationSec: number,
  timeoutSec = 10,
  headers: Readonly<Record<string, string>> = {},
): Promise<ClosedLoopFigures> {
  const ok: number[] = [];
  const shedMs: number[] = [];
  let other = 0;
  let retryAfterMissing = 0;
  const byCode: Record<string, number> = {};
  const instance = autocannon({
    url,
    connections,
    duration: durationSec,
    timeout: timeoutSec,
    requests: [
      {
        method: 'POST',
        path: '/api/score',
        headers: { 'content-type': 'application/json', ...headers },
        setupRequest: (req) => ({ ...req, body: body() }),
        onResponse: (status, text, _context, headers) => {
          if (status !== 503) return;
          if (headers?.['retry-after'] === undefined) retryAfterMissing++;
          const code = /"code":"([a-z_]+)"/.exec(text)?.[1] ?? 'none';
          byCode[code] = (byCode[code] ?? 0) + 1;
        },
      },
    ],
  });
  (instance as unknown as NodeJS.EventEmitter).on(
    'response',
    (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status === 200) ok.push(ms);
      else if (status === 503) shedMs.push(ms);
      else other++;
    },
  );
  const result = await instance;
  ok.sort((a, b) => a - b);
  shedMs.sort((a, b) => a - b);
  const timeouts = result.errors; // autocannon counts each timeout as an error too (and connection errors)
  const sent = ok.length + shedMs.length + other + timeouts;
  return {
    connections,
    duration_s: result.duration,
    goodput_rps: Math.round(ok.length / result.duration),
    shed: shedMs.length,
    other,
    timeouts,
    timeout_pct: sent === 0 ? 0 : Math.round((10_000 * timeouts) / sent) / 100,
    p50_accepted_ms: pct(ok, 50),
    p99_accepted_ms: pct(ok, 99),
    p50_shed_ms: pct(shedMs, 50),
    p99_shed_ms: pct(shedMs, 99),
    shed_by_code: byCode,
    retry_after_on_every_503: retryAfterMissing === 0,
  };
}

/**
 * Runs the scenario against a freshly started service: a short warm-up, the maximum at
 * {@link MAX_CONNECTIONS}, then {@link OVERLOAD_CONNECTIONS}.
 */
export async function overloadScenario(
  server: ServerChild,
  body: () => string,
  plan: { readonly durationSec: number; readonly warmSec: number },
  log: (msg: string) => void,
): Promise<OverloadFigures> {
  await closedLoop(server.url, body, MAX_CONNECTIONS, plan.warmSec);
  const max = await closedLoop(server.url, body, MAX_CONNECTIONS, plan.durationSec);
  log(`overload: max at ${MAX_CONNECTIONS} connections ${max.goodput_rps} req/s, p99 ${max.p99_accepted_ms} ms`);
  const overload = await closedLoop(server.url, body, OVERLOAD_CONNECTIONS, plan.durationSec);
  const ratio = Number((overload.goodput_rps / Math.max(1, max.goodput_rps)).toPrecision(3));
  log(
    `overload: ${OVERLOAD_CONNECTIONS} connections: ${overload.goodput_rps} × 200/s (${ratio} of max), ` +
      `${overload.shed} × 503 (p50 ${overload.p50_shed_ms} ms), ${overload.timeouts} timeouts, ` +
      `p99 accepted ${overload.p99_accepted_ms} ms`,
  );
  const admission_after = await admissionStats(server.url);
  log(`overload: admission after the run ${JSON.stringify(admission_after)}`);
  return { max, overload, overload_goodput_vs_max: ratio, admission_after };
}

/** What a refusal costs in the app: 503s per second with every request refused, next to 200s per second served. */
export interface RefusalFigures {
  /** Every request refused by the engine's admission inside the function handler. */
  readonly refused: ClosedLoopFigures;
  /** The same service serving (its maximum at the same connections). */
  readonly served: ClosedLoopFigures;
  /** `refused` 503s per second ÷ `served` 200s per second. */
  readonly refused_vs_served: number;
}

/**
 * The refusal-cost scenario: a service held full (`bench/servers/refusing.ts`: every request refused by the
 * engine's admission, in the app) and the same service serving (requests with `x-deadline-ms: 2000`), each
 * hit by {@link MAX_CONNECTIONS} closed-loop connections for `durationSec`, one after the other.
 */
export async function refusalScenario(
  start: (kind: 'refusing' | 'serving') => Promise<ServerChild>,
  body: () => string,
  durationSec: number,
  log: (msg: string) => void,
): Promise<RefusalFigures> {
  // the serving run's callers allow 2 s (x-deadline-ms), so the app serves them: what a 200 costs in the app
  const run = async (kind: 'refusing' | 'serving'): Promise<ClosedLoopFigures> => {
    const server = await start(kind);
    const headers: Record<string, string> = kind === 'serving' ? { 'x-deadline-ms': '2000' } : {};
    try {
      await closedLoop(server.url, body, MAX_CONNECTIONS, 1, 10, headers);
      return await closedLoop(server.url, body, MAX_CONNECTIONS, durationSec, 10, headers);
    } finally {
      await server.stop();
    }
  };
  const refused = await run('refusing');
  const served = await run('serving');
  const rate503 = refused.shed / Math.max(1e-9, refused.duration_s);
  const ratio = Number((rate503 / Math.max(1, served.goodput_rps)).toPrecision(3));
  log(
    `refusals: ${Math.round(rate503)} × 503/s (p50 ${refused.p50_shed_ms} ms) vs ${served.goodput_rps} × 200/s ` +
      `(p50 ${served.p50_accepted_ms} ms): ${ratio}×`,
  );
  return { refused, served, refused_vs_served: ratio };
}

/**
 * Standalone: `node dist/bench/overload.js [small|heavy] [--quick]`, one model, a fresh service;
 * `node dist/bench/overload.js refusal [--quick]`, the refusal-cost scenario.
 */
async function main(): Promise<void> {
  const { startServer } = await import('./children');
  const { writeRandomModel } = await import('../lib/training/random-model');
  const { paymentBody } = await import('../test/support/load/payment-body');
  const { appRoot } = await import('../lib/config/app-root');
  const path = await import('node:path');
  const key = process.argv.includes('heavy') ? 'heavy' : 'small';
  const quick = process.argv.includes('--quick');
  const dir = key === 'heavy' ? path.join(appRoot(), 'bench', 'models', 'heavy') : path.join(appRoot(), 'models');
  if (key === 'heavy') await writeRandomModel(dir, { hidden: [2048, 2048, 2048], seed: 7 });
  const env = {
    MODEL_DIR: dir,
    MODEL_NAME: 'fraud',
    LOG_LEVEL: 'error',
    REDIS_URL: process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: 'bench:svc:',
  };
  if (process.argv.includes('refusal')) {
    const f = await refusalScenario(
      (kind) =>
        kind === 'serving'
          ? startServer('servers/service', env)
          : startServer('servers/refusing', { ...env, ADMISSION_MAX_INFLIGHT: '1', ADMISSION_MIN_INFLIGHT: '1' }),
      paymentBody,
      quick ? 3 : 10,
      (m) => process.stderr.write(`[refusal] ${m}\n`),
    );
    process.stdout.write(`${JSON.stringify({ refusal: f }, null, 2)}\n`);
    return;
  }
  const server = await startServer('servers/service', env);
  try {
    const f = await overloadScenario(
      server,
      paymentBody,
      quick ? { durationSec: 3, warmSec: 1 } : { durationSec: 10, warmSec: 2 },
      (m) => process.stderr.write(`[overload ${key}] ${m}\n`),
    );
    process.stdout.write(`${JSON.stringify({ [key]: f }, null, 2)}\n`);
  } finally {
    await server.stop();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`overload failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
