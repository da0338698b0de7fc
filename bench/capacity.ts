/**
 * `npm run bench:capacity [-- --quick] [-- --model small|heavy]`: what one instance serves, per model.
 *
 * For each model (`small`: the bundled fraud model; `heavy`: the generated ≈ 34 MB MLP), the naive Functions app
 * (the fair peer) and the service, each in its own process under the same local host, the client in this process:
 *
 * - `capacity_rps`: goodput (200s per second) at {@link MAX_CONNECTIONS} (64) closed-loop connections, service and
 *   naive app alternating over rounds, each with its p99 at that load; `ratios.capacity_vs_naive_functions` = the
 *   median of the rounds' service ÷ naive ratios;
 * - `refusals_below_capacity`: every non-2xx answer of the service to open-loop loads at fixed rates of 20 % and
 *   50 % of the naive app's capacity (`at_20pct`, `at_50pct`, and their sum as the figure);
 * - `slo_rps`: the highest fixed rate (open loop, a ladder of fractions of the service's capacity) at which the
 *   service's p99 stays at or under 50 ms and it answers everything 200; `instances_for_10k_rps` = ⌈10 000 ÷
 *   slo_rps⌉, the fleet the reference article sizes (../shared/reference/);
 * - the same capacity with 2 worker processes (`FUNCTIONS_WORKER_PROCESS_COUNT=2`: `workers_2.capacity_rps`, and its
 *   ratio to 1 process; `BENCH_WORKER_PROCESSES=0` leaves it out).
 *
 * Writes bench/results/capacity.json.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { appRoot } from '../lib/config/app-root';
import { startServer, type ServerChild } from './children';
import { spreadOf } from './load';
import { machine } from './machine';
import { writeRandomModel } from '../lib/training/random-model';
import { openLoop } from '../test/support/load/open-loop';
import { closedLoop, MAX_CONNECTIONS } from './overload';
import { paymentBody } from '../test/support/load/payment-body';
import { deleteKeys } from './redis-keys';
import { bundledModelFile, seedNaiveProfiles } from './naive-profiles';

const QUICK = process.argv.includes('--quick');
/** Also the service with `FUNCTIONS_WORKER_PROCESS_COUNT=2` (`BENCH_WORKER_PROCESSES=0`: not). */
const WORKER_PROCESSES = process.env['BENCH_WORKER_PROCESSES'] !== '0';
const ONLY = process.argv.includes('--model') ? process.argv[process.argv.indexOf('--model') + 1] : undefined;
const PLAN = QUICK
  ? { rounds: 3, capacitySec: 5, fixedSec: 5, ladderSec: 4, warmSec: 2 }
  : { rounds: 5, capacitySec: 8, fixedSec: 10, ladderSec: 6, warmSec: 3 };
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** The latency objective the SLO ladder holds, ms. */
const SLO_P99_MS = 50;
/** The fleet the article sizes, req/s. */
const FLEET_RPS = 10_000;
/** The ladder of fixed rates, as fractions of the service's capacity. */
const LADDER = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

const log = (msg: string): void =>
  void process.stderr.write(`[capacity ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/** A fixed-rate run's outcome. */
interface FixedRun {
  readonly rate: number;
  readonly ok_rps: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly p99_ms: number;
}

async function fixed(server: ServerChild, rate: number, durationSec: number): Promise<FixedRun> {
  const f = await openLoop({ url: server.url, path: '/api/score', body: paymentBody, rate, durationSec });
  return { rate, ok_rps: f.rps, non2xx: f.non2xx, errors: f.errors, p99_ms: f.p99_ms };
}

async function capacity(server: ServerChild, sec: number): Promise<{ rps: number; p99_ms: number; non200: number }> {
  const f = await closedLoop(server.url, paymentBody, MAX_CONNECTIONS, sec);
  return { rps: f.goodput_rps, p99_ms: f.p99_accepted_ms, non200: f.shed + f.other + f.timeouts };
}

async function benchModel(key: string, dir: string, file: string, logDir: string): Promise<Record<string, unknown>> {
  const serviceEnv = {
    MODEL_DIR: dir,
    MODEL_NAME: 'fraud',
    LOG_LEVEL: 'error',
    REDIS_URL,
    REDIS_KEY_PREFIX: `bench:cap:${key}:`,
    DECISION_LOG_DIR: path.join(logDir, key),
  };
  const servers: ServerChild[] = [];
  try {
    const naive = await startServer('servers/naive-functions', { BENCH_MODEL: file, BENCH_REDIS_URL: REDIS_URL });
    servers.push(naive);
    const service = await startServer('servers/service', serviceEnv);
    servers.push(service);
    const two = WORKER_PROCESSES
      ? await startServer('servers/service', { ...serviceEnv, FUNCTIONS_WORKER_PROCESS_COUNT: '2' })
      : undefined;
    if (two !== undefined) servers.push(two);
    for (const s of servers) await capacity(s, PLAN.warmSec);
    const runs = { naive: [] as number[], service: [] as number[], two: [] as number[] };
    const p99 = { naive: [] as number[], service: [] as number[], two: [] as number[] };
    const arms = (
      [
        ['naive', naive],
        ['service', service],
        ['two', two],
      ] as const
    ).filter((a): a is readonly ['naive' | 'service' | 'two', ServerChild] => a[1] !== undefined);
    for (let r = 0; r < PLAN.rounds; r++) {
      for (let k = 0; k < arms.length; k++) {
        const [name, server] = arms[(k + r) % arms.length] as (typeof arms)[number];
        const c = await capacity(server, PLAN.capacitySec);
        runs[name].push(c.rps);
        p99[name].push(c.p99_ms);
        log(`${key} round ${r + 1} ${name}: ${c.rps} req/s at ${MAX_CONNECTIONS} connections, p99 ${c.p99_ms} ms`);
      }
    }
    const med = (xs: number[]): number => spreadOf(xs, 4).median;
    const naiveMax = med(runs.naive);
    const serviceMax = med(runs.service);
    const refusals: Record<string, FixedRun> = {};
    for (const share of [0.2, 0.5]) {
      const f = await fixed(service, Math.round(naiveMax * share), PLAN.fixedSec);
      refusals[`at_${share * 100}pct`] = f;
      log(`${key} at ${share * 100} % of the naive maximum (${f.rate} req/s): ${f.non2xx + f.errors} not 200`);
    }
    const ladder: FixedRun[] = [];
    for (const share of LADDER) {
      const f = await fixed(service, Math.max(1, Math.round(serviceMax * share)), PLAN.ladderSec);
      ladder.push(f);
      log(`${key} ladder ${f.rate} req/s: p99 ${f.p99_ms} ms, ${f.non2xx + f.errors} not 200`);
    }
    const within = ladder.filter((f) => f.p99_ms <= SLO_P99_MS && f.non2xx + f.errors === 0);
    const sloRps = within.length === 0 ? 0 : Math.max(...within.map((f) => f.ok_rps));
    return {
      capacity_rps: serviceMax,
      capacity_p99_ms: med(p99.service),
      naive_functions: { capacity_rps: naiveMax, capacity_p99_ms: med(p99.naive) },
      capacity_rounds: { service: runs.service, naive_functions: runs.naive, ...(two ? { workers_2: runs.two } : {}) },
      ratios: {
        capacity_vs_naive_functions: spreadOf(
          runs.service.map((v, i) => v / (runs.naive[i] ?? Number.NaN)),
          3,
        ).median,
        workers_2_vs_1: spreadOf(
          runs.two.map((v, i) => v / (runs.service[i] ?? Number.NaN)),
          3,
        ).median,
      },
      ...(two === undefined ? {} : { workers_2: { capacity_rps: med(runs.two), capacity_p99_ms: med(p99.two) } }),
      refusals_below_capacity: Object.values(refusals).reduce((s, f) => s + f.non2xx + f.errors, 0),
      refusals_at: refusals,
      slo_rps: sloRps,
      slo_p99_ms: SLO_P99_MS,
      instances_for_10k_rps: sloRps === 0 ? null : Math.ceil(FLEET_RPS / sloRps),
      slo_ladder: ladder,
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

async function main(): Promise<void> {
  const root = appRoot();
  const started = Date.now();
  const modelsDir = path.join(root, 'models');
  const modelFile = await bundledModelFile(modelsDir);
  const logDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-capacity-log-'));
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const models: Record<string, unknown> = {};
  try {
    await seedNaiveProfiles(redis);
    if (ONLY === undefined || ONLY === 'small')
      models['small'] = await benchModel('small', modelsDir, modelFile, logDir);
    if (ONLY === undefined || ONLY === 'heavy') {
      const heavyDir = path.join(root, 'bench', 'models', 'heavy');
      const heavyFile = await writeRandomModel(heavyDir, { hidden: [2048, 2048, 2048], seed: 7 });
      models['heavy'] = await benchModel('heavy', heavyDir, heavyFile, logDir);
    }
  } finally {
    await deleteKeys(redis, 'bench:cap:*');
    await deleteKeys(redis, 'bench:naive:*');
    redis.disconnect();
    await fs.rm(logDir, { recursive: true, force: true });
  }
  const result = {
    machine: machine(),
    settings: { quick: QUICK, ...PLAN, connections: MAX_CONNECTIONS, duration_total_s: 0 },
    ...models,
  };
  result.settings.duration_total_s = Math.round((Date.now() - started) / 1000);
  const out = path.join(root, 'bench', 'results');
  await fs.mkdir(out, { recursive: true });
  await fs.writeFile(path.join(out, 'capacity.json'), `${JSON.stringify(result, null, 2)}\n`);
  for (const [k, m] of Object.entries(models)) {
    const x = m as Record<string, unknown>;
    process.stdout.write(
      `${k}: capacity ${String(x['capacity_rps'])} req/s (ratio ${JSON.stringify(x['ratios'])}), refusals below ` +
        `capacity ${String(x['refusals_below_capacity'])}, slo_rps ${String(x['slo_rps'])}, instances for 10k ` +
        `${String(x['instances_for_10k_rps'])}\n`,
    );
  }
  process.stdout.write(`wrote bench/results/capacity.json (${result.settings.duration_total_s} s)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:capacity failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
