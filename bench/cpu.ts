/**
 * `npm run bench:cpu [-- --quick]`: CPU time per decision, the figure that decides (issue 28): it measures
 * work, not waiting, so it holds still on a noisy 2-core machine where p99 ratios swing 10×.
 *
 * Each arm is a server in its own process under the same local host (bench/servers/), the client is this
 * process: an open-loop load at a fixed rate (`BENCH_CPU_RATE`, default 400 req/s) for `durationSec`, the arms
 * alternating over `rounds` rounds (the order rotated each round). Around each run, the server's CPU is read from
 * `/proc` (./proc-cpu): its **app thread** (the main thread, where the function modules run) and its **whole
 * process**, divided by the 200s it answered.
 *
 * Arms: `naive_functions` (the fair peer: bench/servers/naive-functions-app.ts), `service` (as `npm run bench`
 * runs it: rules and lists, the decision log, telemetry off), and the service with one thing changed:
 * `no_rules` (`RULESET_NAME=none`: no ruleset, no list lookups), `no_decision_log` (`DECISION_LOG_ENABLED=false`),
 * `telemetry_deployed` (metrics on, traces sampled as the Azure Monitor distro does: servers/service-traced), and
 * with `BENCH_NODE` set, `service_node2` and `telemetry_deployed_node2` on that Node (`marginal.telemetry_deployed_second_node`),
 * `review_10pct` (a ruleset that sends 10 % of the payments to review: ./case-arms, loaded with first payments of
 * new users so that the share stays 10 %) and `cases` (the same with the
 * case queue on the PostgreSQL server: `marginal.cases`),
 * `workers_2` (`FUNCTIONS_WORKER_PROCESS_COUNT=2`: the host's process and its forked worker process read together,
 * ./proc-cpu).
 *
 * Written to `bench/results/cpu.json` under `cpu`:
 * - `per_decision`: per arm, the median µs per answered request with its range (`main_us`, `process_us`);
 *   `main_ratio` and `process_ratio` = the median over rounds of service ÷ naive_functions in the same round;
 * - `marginal.<feature>`: what a feature adds to the service's app-thread CPU per decision, as a share
 *   (`on ÷ off − 1`, paired by round, median): `rules` (service vs no_rules), `decision_log` (service vs
 *   no_decision_log), `telemetry_deployed` (telemetry_deployed vs service); `marginal_process` the same on the
 *   process's CPU;
 * - `refusals_at_fixed_rate`: every non-2xx answer of the service arms at that rate (503 refusals or worse);
 * - `workers_2`: 2 worker processes ÷ 1, per decision (`main_ratio_vs_1` sums the processes' main threads);
 * - `before_after` (with `BENCH_BASELINE_APP`): this service ÷ the other checkout's, per decision, paired by round.
 * `BENCH_CPU_FILE` names the result file: the before/after run (`BENCH_CPU_ARMS=naive_functions,service,baseline`)
 * writes `cpu-before-after.json`.
 * @module
 */
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { appRoot } from '../lib/config/app-root';
import { secondNode, type ServerChild } from './children';
import { spreadOf, type Spread } from './load';
import { loadAverage, machine } from './machine';
import { openLoop } from '../test/support/load/open-loop';
import { paymentBody } from '../test/support/load/payment-body';
import { ARMS, BASELINE_APP, bodyOf, MARGINALS, startArm, type Arm, type ArmSetup } from './cpu-arms';
import { perUnitUs, readCpu } from './proc-cpu';
import { deleteKeys } from './redis-keys';
import { bundledModelFile, seedNaiveProfiles } from './naive-profiles';
import { caseDatabase, reviewTenPercentRulesets } from './case-arms';

/** The load average before this run loaded the machine (figures taken above 1 are not committed). */
const LOAD_BEFORE = loadAverage();
const QUICK = process.argv.includes('--quick');
/** `BENCH_CPU_FILE`: the result file under bench/results (default `cpu.json`; the before/after run writes its own). */
const RESULT_FILE = process.env['BENCH_CPU_FILE'] ?? 'cpu.json';
const PLAN = {
  ...(QUICK ? { rounds: 5, durationSec: 5, warmSec: 3 } : { rounds: 7, durationSec: 10, warmSec: 5 }),
  ...(process.env['BENCH_CPU_ROUNDS'] === undefined ? {} : { rounds: Number(process.env['BENCH_CPU_ROUNDS']) }),
};
const RATE = Number(process.env['BENCH_CPU_RATE'] ?? 400);
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** One run of one arm. */
interface ArmRun {
  readonly main_us: number;
  readonly process_us: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly p99_ms: number;
}

/** The figures of an arm that did not run (`BENCH_CPU_ARMS`). */
const MISSING: ArmRun = {
  main_us: Number.NaN,
  process_us: Number.NaN,
  ok: 0,
  non2xx: 0,
  errors: 0,
  p99_ms: Number.NaN,
};

const log = (msg: string): void =>
  void process.stderr.write(`[cpu ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/** One open-loop run at {@link RATE} with the server's CPU read around it. */
async function run(server: ServerChild, durationSec: number, body = paymentBody): Promise<ArmRun> {
  const before = readCpu(server.pid);
  const f = await openLoop({ url: server.url, path: '/api/score', body, rate: RATE, durationSec });
  const after = readCpu(server.pid);
  const ok = Math.round(f.rps * durationSec);
  return { ...perUnitUs(before, after, ok), ok, non2xx: f.non2xx, errors: f.errors, p99_ms: f.p99_ms };
}

const r3 = (v: number): number => Math.round(v * 1000) / 1000;

/** Median over rounds of `f(round)`, with the range. */
function paired(rounds: number, f: (r: number) => number): Spread {
  return spreadOf(Array.from({ length: rounds }, (_, r) => f(r)));
}

async function main(): Promise<void> {
  const root = appRoot();
  const out = path.join(root, 'bench', 'results');
  const started = Date.now();
  const modelsDir = path.join(root, 'models');
  const modelFile = await bundledModelFile(modelsDir);
  const logDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-cpu-log-'));
  const serviceEnv = {
    MODEL_DIR: modelsDir,
    MODEL_NAME: 'fraud',
    LOG_LEVEL: 'error',
    REDIS_URL,
    REDIS_KEY_PREFIX: 'bench:cpu:',
    DECISION_LOG_DIR: logDir,
    RULESET_DIR: path.join(root, 'rulesets'), // absolute: the second Node's copy of the app has only dist/
    OTEL_TRACES_EXPORTER: 'none',
    APPLICATIONINSIGHTS_CONNECTION_STRING: '',
  };
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const servers: Partial<Record<Arm, ServerChild>> = {};
  let dropCaseDb: (() => Promise<void>) | undefined;
  let countCases: () => Promise<number> = () => Promise.resolve(0);
  const cleanups: (() => Promise<void>)[] = [];
  try {
    await seedNaiveProfiles(redis);
    const node2 = await secondNode(root);
    const caseDb = await caseDatabase();
    dropCaseDb = caseDb.drop;
    countCases = caseDb.count;
    const reviewRulesets = await reviewTenPercentRulesets(root);
    cleanups.push(() => fs.rm(reviewRulesets, { recursive: true, force: true }));
    const setupArms: ArmSetup = { node2, reviewRulesets, caseEnv: caseDb.env };
    for (const arm of ARMS) servers[arm] = await startArm(arm, modelFile, serviceEnv, setupArms);
    log(`servers up; warming each for ${PLAN.warmSec} s at ${RATE} req/s`);
    for (const arm of ARMS) await run(servers[arm] as ServerChild, PLAN.warmSec, bodyOf(arm));
    const runs: Record<Arm, ArmRun[]> = Object.fromEntries(ARMS.map((a) => [a, [] as ArmRun[]])) as Record<
      Arm,
      ArmRun[]
    >;
    for (let r = 0; r < PLAN.rounds; r++) {
      for (let k = 0; k < ARMS.length; k++) {
        const arm = ARMS[(k + r) % ARMS.length] as Arm;
        const f = await run(servers[arm] as ServerChild, PLAN.durationSec, bodyOf(arm));
        runs[arm].push(f);
        log(
          `round ${r + 1} ${arm}: app thread ${f.main_us} µs, process ${f.process_us} µs per answer; ` +
            `${f.ok} ok, ${f.non2xx} non-2xx, p99 ${f.p99_ms} ms`,
        );
      }
    }
    const at = (arm: Arm, r: number): ArmRun => runs[arm]?.[r] ?? MISSING; // an arm left out: NaN, dropped by spreadOf
    const perArm = Object.fromEntries(
      ARMS.map((a) => [
        a,
        {
          main_us: spreadOf(
            runs[a].map((x) => x.main_us),
            4,
          ),
          process_us: spreadOf(
            runs[a].map((x) => x.process_us),
            4,
          ),
          non2xx: runs[a].reduce((s, x) => s + x.non2xx + x.errors, 0),
        },
      ]),
    );
    const mainRatio = paired(PLAN.rounds, (r) => at('service', r).main_us / at('naive_functions', r).main_us);
    const processRatio = paired(PLAN.rounds, (r) => at('service', r).process_us / at('naive_functions', r).process_us);
    const marginal: Record<string, number | Spread> = {};
    const marginalProcess: Record<string, number> = {};
    for (const [feature, on, off] of MARGINALS) {
      const s = paired(PLAN.rounds, (r) => at(on, r).main_us / at(off, r).main_us - 1);
      marginal[feature] = r3(s.median);
      marginal[`${feature}_spread`] = s; // beside the figure: the benchmarks page shows the rounds
      marginalProcess[feature] = r3(
        paired(PLAN.rounds, (r) => at(on, r).process_us / at(off, r).process_us - 1).median,
      );
    }
    const beforeAfter = ARMS.includes('baseline')
      ? {
          baseline_app: BASELINE_APP,
          main_ratio_vs_baseline: paired(PLAN.rounds, (r) => at('service', r).main_us / at('baseline', r).main_us),
          process_ratio_vs_baseline: paired(
            PLAN.rounds,
            (r) => at('service', r).process_us / at('baseline', r).process_us,
          ),
        }
      : undefined;
    const workers2 = {
      main_ratio_vs_1: paired(PLAN.rounds, (r) => at('workers_2', r).main_us / at('service', r).main_us),
      process_ratio_vs_1: paired(PLAN.rounds, (r) => at('workers_2', r).process_us / at('service', r).process_us),
    };
    const refusals = ARMS.filter((a) => a !== 'naive_functions' && a !== 'baseline').reduce(
      (s, a) => s + (perArm[a]?.non2xx ?? 0),
      0,
    );
    const cpu = {
      node: process.version,
      ...(node2 === undefined
        ? {}
        : { second_node: spawnSync(node2.node, ['--version'], { encoding: 'utf8' }).stdout.trim() }),
      rate_rps: RATE,
      per_decision: {
        ...perArm,
        main_ratio: r3(mainRatio.median),
        process_ratio: r3(processRatio.median),
        main_ratio_spread: mainRatio,
        process_ratio_spread: processRatio,
      },
      marginal,
      marginal_process: marginalProcess,
      refusals_at_fixed_rate: refusals,
      /** Cases the `cases` arm stored (about 10 % of its answers). */
      cases_opened: await countCases(),
      ...(ARMS.includes('workers_2') ? { workers_2: workers2 } : {}),
      ...(beforeAfter === undefined ? {} : { before_after: beforeAfter }),
    };
    const result = {
      machine: machine(LOAD_BEFORE),
      settings: { quick: QUICK, ...PLAN, rate_rps: RATE, duration_total_s: Math.round((Date.now() - started) / 1000) },
      cpu,
    };
    await fs.mkdir(out, { recursive: true });
    await fs.writeFile(path.join(out, RESULT_FILE), `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(
      `cpu per decision (app thread / process, µs): naive_functions ${perArm['naive_functions']?.main_us.median} / ` +
        `${perArm['naive_functions']?.process_us.median}, service ${perArm['service']?.main_us.median} / ` +
        `${perArm['service']?.process_us.median}; main_ratio ${cpu.per_decision.main_ratio}, process_ratio ` +
        `${cpu.per_decision.process_ratio}\nmarginal: ${JSON.stringify(marginal)} (process: ` +
        `${JSON.stringify(marginalProcess)}); refusals at ${RATE} req/s: ${refusals}\n` +
        `wrote bench/results/${RESULT_FILE} (${result.settings.duration_total_s} s)\n`,
    );
  } finally {
    await Promise.all(ARMS.map((a) => servers[a]?.stop()));
    await dropCaseDb?.();
    for (const c of cleanups) await c();
    await deleteKeys(redis, 'bench:cpu:*');
    await deleteKeys(redis, 'bench:naive:*');
    redis.disconnect();
    await fs.rm(logDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:cpu failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
