/**
 * `npm run bench:signals`: the CPU and Redis work per decision of signals (docs/signals.md "Budget"), each server in
 * its own process, loaded open-loop at a fixed rate (`BENCH_CPU_RATE`, default 400 req/s) by a client in another,
 * the arms alternating over rounds (order rotated each round). Every arm is loaded with payments that carry the
 * fraud-signal fields (test/support/load/payment-body.ts `richPaymentBody`):
 * - `naive_functions`: the fair peer (bench/servers/naive-functions);
 * - `service`: the service with the shipped signals (the 17 features, no aggregates);
 * - `signals_12`: the shipped signals plus 12 aggregates over 5 keys (user, card fingerprint, device, IP address,
 *   email): bench/signals/default/1.2.0.json;
 * - `signals_12_one_script` (`SIGNALS_ONE_SCRIPT=true`: every key of a payment in one script call);
 * - `baseline` (with `BENCH_BASELINE_APP`, another built checkout: the service before signals, 17 features).
 * Figures: per arm, app thread and process CPU µs per answer (medians and ranges over rounds); ratios per round
 * (signals_12 ÷ naive_functions, signals_12 ÷ baseline, service ÷ naive_functions); and the Redis work per decision
 * of each arm, from `INFO commandstats` and `INFO stats` around its runs: commands, server CPU µs, and read events
 * (`total_reads_processed`: how many times the server read a client's socket; with auto-pipelining, about the round
 * trips). Then capacity: closed loop at {@link CAPACITY_CONNECTIONS} connections on embedded defaults (no Redis: the
 * in-process stores), the naive Functions app, the service with the shipped signals and with the 12 aggregates,
 * alternating over rounds: answers per second and their ratio to the naive app's. Writes bench/results/signals.json.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { appRoot } from '../lib/config/app-root';
import { startServer, type ServerChild } from './children';
import { spreadOf, type Spread } from './load';
import { loadAverage, machine } from './machine';
import { bundledModelFile, seedNaiveProfiles } from './naive-profiles';
import { openLoop } from '../test/support/load/open-loop';
import { closedLoop } from './overload';
import { richPaymentBody } from '../test/support/load/payment-body';
import { perUnitUs, readCpu } from './proc-cpu';
import { deleteKeys } from './redis-keys';

const LOAD_BEFORE = loadAverage();
const QUICK = process.argv.includes('--quick');
const PLAN = QUICK ? { rounds: 3, durationSec: 5, warmSec: 3 } : { rounds: 5, durationSec: 10, warmSec: 5 };
const RATE = Number(process.env['BENCH_CPU_RATE'] ?? 400);
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const BASELINE_APP = process.env['BENCH_BASELINE_APP'];
const ARMS = ['naive_functions', 'service', 'signals_12', 'signals_12_one_script', 'baseline'].filter(
  (a) => a !== 'baseline' || (BASELINE_APP ?? '') !== '',
);

/** Redis counters read around a run. */
interface RedisCounters {
  readonly calls: number;
  readonly usec: number;
  readonly reads: number;
}

async function redisCounters(redis: Redis): Promise<RedisCounters> {
  const stats = await redis.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const m of stats.matchAll(/^cmdstat_([a-z|]+):calls=(\d+),usec=(\d+)/gm)) {
    if (m[1] === 'info') continue; // ours
    calls += Number(m[2]);
    usec += Number(m[3]);
  }
  const reads = Number(/total_reads_processed:(\d+)/.exec(await redis.info('stats'))?.[1] ?? NaN);
  return { calls, usec, reads };
}

interface ArmRun {
  readonly main_us: number;
  readonly process_us: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly redis_commands: number;
  readonly redis_usec: number;
  readonly redis_reads: number;
}

/** Closed-loop connections of the capacity phase (the budget). */
const CAPACITY_CONNECTIONS = 256;
const CAPACITY_ARMS = ['naive_functions', 'embedded', 'embedded_signals_12'] as const;

/**
 * Answers per second of each capacity arm at {@link CAPACITY_CONNECTIONS} connections (closed loop), alternating over
 * rounds, on embedded defaults (no Redis for the service; the naive app keeps its Redis, as it is written).
 */
async function capacity(env: Record<string, string>, modelFile: string): Promise<Record<string, unknown>> {
  const { REDIS_URL: _r, REDIS_KEY_PREFIX: _p, ...embedded } = env;
  const signals12 = path.join(appRoot(), 'bench', 'signals');
  const servers: Record<string, ServerChild> = {};
  try {
    servers['naive_functions'] = await startArm('naive_functions', env, modelFile);
    servers['embedded'] = await startServer('servers/service', embedded);
    servers['embedded_signals_12'] = await startServer('servers/service', { ...embedded, SIGNALS_DIR: signals12 });
    for (const arm of CAPACITY_ARMS) await closedLoop((servers[arm] as ServerChild).url, richPaymentBody, 64, 3);
    const rps: Record<string, number[]> = Object.fromEntries(CAPACITY_ARMS.map((a) => [a, []]));
    for (let r = 0; r < PLAN.rounds; r++)
      for (let k = 0; k < CAPACITY_ARMS.length; k++) {
        const arm = CAPACITY_ARMS[(k + r) % CAPACITY_ARMS.length] as string;
        const url = (servers[arm] as ServerChild).url;
        const f = await closedLoop(url, richPaymentBody, CAPACITY_CONNECTIONS, PLAN.durationSec);
        (rps[arm] as number[]).push(f.goodput_rps);
        log(`capacity round ${r + 1} ${arm}: ${f.goodput_rps} answers/s at ${CAPACITY_CONNECTIONS} connections`);
      }
    const ratio = (a: string): Spread =>
      spreadOf(
        Array.from({ length: PLAN.rounds }, (_, r) => (rps[a]?.[r] ?? NaN) / (rps['naive_functions']?.[r] ?? NaN)),
      );
    return {
      connections: CAPACITY_CONNECTIONS,
      answers_per_s: Object.fromEntries(CAPACITY_ARMS.map((a) => [a, spreadOf(rps[a] ?? [], 4)])),
      embedded_vs_naive: ratio('embedded'),
      embedded_signals_12_vs_naive: ratio('embedded_signals_12'),
    };
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}

const log = (msg: string): void =>
  void process.stderr.write(`[signals ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

async function run(server: ServerChild, redis: Redis, durationSec: number): Promise<ArmRun> {
  const r0 = await redisCounters(redis);
  const before = readCpu(server.pid);
  const f = await openLoop({ url: server.url, path: '/api/score', body: richPaymentBody, rate: RATE, durationSec });
  const after = readCpu(server.pid);
  const r1 = await redisCounters(redis);
  const ok = Math.round(f.rps * durationSec);
  const per = (x: number): number => Math.round((x / Math.max(1, ok)) * 100) / 100;
  return {
    ...perUnitUs(before, after, ok),
    ok,
    non2xx: f.non2xx + f.errors,
    redis_commands: per(r1.calls - r0.calls),
    redis_usec: per(r1.usec - r0.usec),
    redis_reads: per(r1.reads - r0.reads),
  };
}

async function startArm(arm: string, env: Record<string, string>, modelFile: string): Promise<ServerChild> {
  const signals12 = path.join(appRoot(), 'bench', 'signals');
  switch (arm) {
    case 'naive_functions':
      return startServer('servers/naive-functions', { BENCH_MODEL: modelFile, BENCH_REDIS_URL: REDIS_URL });
    case 'signals_12':
      return startServer('servers/service', { ...env, SIGNALS_DIR: signals12 });
    case 'signals_12_one_script':
      return startServer('servers/service', { ...env, SIGNALS_DIR: signals12, SIGNALS_ONE_SCRIPT: 'true' });
    case 'baseline':
      return startServer('servers/service', env, 120_000, { node: process.execPath, app: BASELINE_APP as string });
    default:
      return startServer('servers/service', env);
  }
}

async function main(): Promise<void> {
  const root = appRoot();
  const started = Date.now();
  const modelsDir = path.join(root, 'models');
  const modelFile = await bundledModelFile(modelsDir);
  const logDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-signals-log-'));
  const env = {
    MODEL_DIR: modelsDir,
    MODEL_NAME: 'fraud',
    LOG_LEVEL: 'error',
    REDIS_URL,
    REDIS_KEY_PREFIX: 'bench:signals:',
    DECISION_LOG_DIR: logDir,
    RULESET_DIR: path.join(root, 'rulesets'),
    OTEL_TRACES_EXPORTER: 'none',
    APPLICATIONINSIGHTS_CONNECTION_STRING: '',
  };
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const servers: Record<string, ServerChild> = {};
  try {
    await seedNaiveProfiles(redis);
    for (const arm of ARMS) servers[arm] = await startArm(arm, env, modelFile);
    log(`servers up (${ARMS.join(', ')}); warming each for ${PLAN.warmSec} s at ${RATE} req/s`);
    for (const arm of ARMS) await run(servers[arm] as ServerChild, redis, PLAN.warmSec);
    const runs: Record<string, ArmRun[]> = Object.fromEntries(ARMS.map((a) => [a, []]));
    for (let r = 0; r < PLAN.rounds; r++)
      for (let k = 0; k < ARMS.length; k++) {
        const arm = ARMS[(k + r) % ARMS.length] as string;
        const f = await run(servers[arm] as ServerChild, redis, PLAN.durationSec);
        (runs[arm] as ArmRun[]).push(f);
        log(
          `round ${r + 1} ${arm}: ${f.main_us} / ${f.process_us} µs; redis ${f.redis_commands} cmds, ${f.redis_usec} µs, ${f.redis_reads} reads; ${f.non2xx} non-2xx`,
        );
      }
    const of = (arm: string, k: keyof ArmRun): Spread =>
      spreadOf(
        (runs[arm] ?? []).map((x) => x[k]),
        4,
      );
    const ratio = (a: string, b: string, k: 'main_us' | 'process_us'): Spread =>
      spreadOf(Array.from({ length: PLAN.rounds }, (_, r) => (runs[a]?.[r]?.[k] ?? NaN) / (runs[b]?.[r]?.[k] ?? NaN)));
    const perArm = Object.fromEntries(
      ARMS.map((a) => [
        a,
        {
          main_us: of(a, 'main_us'),
          process_us: of(a, 'process_us'),
          redis_commands: of(a, 'redis_commands'),
          redis_usec: of(a, 'redis_usec'),
          redis_reads: of(a, 'redis_reads'),
          non2xx: (runs[a] ?? []).reduce((s, x) => s + x.non2xx, 0),
        },
      ]),
    );
    const ratios: Record<string, Spread> = {
      signals_12_vs_naive_main: ratio('signals_12', 'naive_functions', 'main_us'),
      signals_12_vs_naive_process: ratio('signals_12', 'naive_functions', 'process_us'),
      service_vs_naive_main: ratio('service', 'naive_functions', 'main_us'),
      service_vs_naive_process: ratio('service', 'naive_functions', 'process_us'),
      signals_12_vs_service_main: ratio('signals_12', 'service', 'main_us'),
      signals_12_one_script_vs_signals_12_main: ratio('signals_12_one_script', 'signals_12', 'main_us'),
      ...(ARMS.includes('baseline')
        ? {
            signals_12_vs_baseline_main: ratio('signals_12', 'baseline', 'main_us'),
            signals_12_vs_baseline_process: ratio('signals_12', 'baseline', 'process_us'),
            service_vs_baseline_main: ratio('service', 'baseline', 'main_us'),
          }
        : {}),
    };
    for (const s of Object.values(servers)) await s.stop(); // the capacity phase runs its own servers
    const cap = await capacity(env, modelFile);
    const result = {
      machine: machine(LOAD_BEFORE),
      settings: { quick: QUICK, ...PLAN, rate_rps: RATE, arms: ARMS, baseline_app: BASELINE_APP ?? null },
      duration_total_s: Math.round((Date.now() - started) / 1000),
      per_decision: perArm,
      ratios,
      capacity: cap,
    };
    const out = path.join(root, 'bench', 'results');
    await fs.mkdir(out, { recursive: true });
    await fs.writeFile(path.join(out, 'signals.json'), `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify({ perArm, ratios }, null, 1)}\nwrote bench/results/signals.json\n`);
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    await deleteKeys(redis, 'bench:signals:*');
    await deleteKeys(redis, 'bench:naive:*');
    redis.disconnect();
    await fs.rm(logDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:signals failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
