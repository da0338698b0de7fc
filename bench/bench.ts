/**
 * `npm run bench [-- --quick]`: every variant side by side on this machine, alternating runs.
 *
 * Models: `small` (the bundled fraud model) and `heavy` (a generated 17 → 3×2048 → 1 MLP, ≈ 34 MB,
 * under bench/models/). Variants: (a) `bare` Node HTTP server, (b) `naive` inline-ORT server with one
 * Redis GET per request, (c) `raw` in-process ORT (rows/s at batch 1 and at the best batch), (d)
 * `service` = this service via the local Functions host (default settings), plus the other inference
 * mode for comparison, (e) `naive_functions`: the naive app written as an Azure Function (real
 * `@azure/functions`) served by the same local host: the service's fair peer. `bare` and `naive` stay as
 * host-free references (`naive_functions_vs_naive` is what the host layer costs). Every closed-loop figure is
 * measured over several rounds (3 in quick mode, 5 in full; the order rotated each round) and reported as the
 * median with its range; ratios are medians of per-round paired ratios (`ratios_spread`). The service also runs
 * at 80 % of its own maximum, and the tail section (`<model>.tail`) at 40 % and 80 % of the naive Functions
 * app's maximum, service and peer alternating (p99 ratio, event-loop delay). Servers are child processes that
 * measure their own event-loop lag. With `BENCH_NODE` and `BENCH_NODE_APP` set (scripts/bench-node.mjs), the
 * telemetry scenario runs a second time under that Node (`telemetry.second_node`). Then the overload scenario (bench/overload.ts): `<model>.overload` and
 * `<model>.ratios.overload_goodput_vs_max`; the burst scenario (bench/burst.ts, client in its own process):
 * `<model>.burst`; and the refusal cost (`refusal`: 503s per second when the app refuses every request,
 * next to 200s per second when it serves, `refusal.refused_vs_served`).
 * Writes bench/results/bench.json and bench/results/bench-latency.svg; prints a table.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import Redis from 'ioredis';
import { appRoot } from '../lib/config/app-root';
import { resolveMode, type InferenceMode } from '../lib/inference/backend-factory';
import { addAsyncBench } from './async';
import { burstScenario, type BurstSection } from './burst';
import { runJob, secondNode, startServer, type ServerChild } from './children';
import { loadRun, medianOf, spreadOf, type RunFigures, type Spread } from './load';
import { writeRandomModel } from '../lib/training/random-model';
import { runEscalationScenario } from './escalation';
import { overloadScenario, refusalScenario, type OverloadFigures, type RefusalFigures } from './overload';
import { paymentBody } from '../test/support/load/payment-body';
import { deleteKeys } from './redis-keys';
import { seedNaiveProfiles } from './naive-profiles';
import {
  checkTargets,
  latencySvg,
  ratios,
  table,
  type BatchEndpointFigures,
  type ModelFigures,
  type RawFigures,
  type TailFigures,
  type TailPoint,
} from './report';
import { benchLearning, type LearningFigures } from './learning';
import { machine } from './machine';
import { benchTelemetry, type TelemetryFigures } from './telemetry';

const QUICK = process.argv.includes('--quick');
/**
 * Every figure is measured over `rounds` rounds and reported as the median with its range; ratios are the medians
 * of per-round paired ratios. `tailSec`: each open-loop run of the tail section (long enough for a p99 at the
 * heavy model's lower rates).
 */
const PLAN = QUICK
  ? { rounds: 3, durationSec: 2, warmSec: 1, connections: 32, tailSec: 3 }
  : { rounds: 5, durationSec: 8, warmSec: 2, connections: 32, tailSec: 10 };
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const HEAVY_HIDDEN = [2048, 2048, 2048];

const body = paymentBody;

interface BenchModel {
  readonly key: 'small' | 'heavy';
  /** Models folder (MODEL_DIR) holding `fraud/{version}.onnx`. */
  readonly dir: string;
  readonly file: string;
  readonly source: string;
}

function log(msg: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

async function models(root: string): Promise<BenchModel[]> {
  const dir = path.join(root, 'models');
  const versions = (await fs.readdir(path.join(dir, 'fraud')).catch(() => [] as string[]))
    .filter((f) => /^\d+\.\d+\.\d+\.onnx$/.test(f))
    .sort();
  const latest = versions.at(-1);
  if (latest === undefined) throw new Error('No bundled model under models/fraud/ (run `npm run model:train`).');
  const heavyDir = path.join(root, 'bench', 'models', 'heavy');
  log('preparing the heavy model (generated once, then reused)');
  const heavyFile = await writeRandomModel(heavyDir, { hidden: HEAVY_HIDDEN, seed: 7 });
  return [
    { key: 'small', dir, file: path.join(dir, 'fraud', latest), source: `bundled models/fraud/${latest}` },
    {
      key: 'heavy',
      dir: heavyDir,
      file: heavyFile,
      source: `generated random MLP 17→${HEAVY_HIDDEN.join('→')}→1 (bench/models/heavy)`,
    },
  ];
}

async function benchModel(m: BenchModel): Promise<ModelFigures> {
  const bytes = (await fs.stat(m.file)).size;
  log(`${m.key}: raw ONNX Runtime throughput`);
  const raw = await runJob<RawFigures>('raw', { BENCH_MODEL: m.file, BENCH_QUICK: QUICK ? '1' : '0' });
  const defaultMode = resolveMode((process.env['INFERENCE_MODE'] as InferenceMode | undefined) ?? 'auto', bytes);
  const altMode = defaultMode === 'inline' ? 'workers' : 'inline';
  const serviceEnv = {
    MODEL_DIR: m.dir,
    MODEL_NAME: 'fraud',
    LOG_LEVEL: 'error',
    REDIS_URL,
    REDIS_KEY_PREFIX: `bench:svc:${m.key}:`, // per model: the fleet pointer lives under the prefix
  };
  log(`${m.key}: starting servers (service mode ${defaultMode}; also service_${altMode})`);
  const servers: Record<string, ServerChild> = {};
  try {
    servers['bare'] = await startServer('servers/bare', {});
    servers['naive'] = await startServer('servers/naive', { BENCH_MODEL: m.file, BENCH_REDIS_URL: REDIS_URL });
    servers['naive_functions'] = await startServer('servers/naive-functions', {
      BENCH_MODEL: m.file,
      BENCH_REDIS_URL: REDIS_URL,
    });
    servers['service'] = await startServer('servers/service', { ...serviceEnv, INFERENCE_MODE: defaultMode });
    servers[`service_${altMode}`] = await startServer('servers/service', { ...serviceEnv, INFERENCE_MODE: altMode });
    const names = Object.keys(servers);
    const run = (name: string, durationSec: number, rate?: number): Promise<RunFigures> =>
      loadRun({
        url: (servers[name] as ServerChild).url,
        path: name === 'bare' || name === 'naive' ? '/score' : '/api/score', // naive_functions: /api/score
        body,
        connections: PLAN.connections,
        durationSec,
        ...(rate === undefined ? {} : { rate }),
      });
    for (const name of names) await run(name, PLAN.warmSec); // warm-up, not recorded
    // --- rounds: every variant once per round, the order rotated, so drift on a shared machine hits all alike
    const runs: Record<string, RunFigures[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < PLAN.rounds; r++) {
      const order = [...names.slice(r % names.length), ...names.slice(0, r % names.length)];
      for (const name of order) {
        const f = await run(name, PLAN.durationSec);
        runs[name]?.push(f);
        log(`${m.key} round ${r + 1}: ${name} ${f.rps} req/s, p99 ${f.p99_ms} ms, loop p99 ${f.loop_lag_p99_ms} ms`);
      }
    }
    const agg = Object.fromEntries(names.map((n) => [n, medianOf(runs[n] ?? [])])) as Record<string, RunFigures>;
    const service = agg['service'] as RunFigures;
    const paired = (a: string, b: string): Spread =>
      spreadOf((runs[a] ?? []).map((f, r) => f.rps / Math.max(1, runs[b]?.[r]?.rps ?? Number.NaN)));
    const ratiosSpread = {
      service_vs_naive_functions: paired('service', 'naive_functions'),
      naive_functions_vs_naive: paired('naive_functions', 'naive'),
      service_vs_naive: paired('service', 'naive'),
    };
    // --- the service at 80 % of its own maximum (open loop), over the rounds
    const offered = Math.max(1, Math.round(service.rps * 0.8));
    const at80: RunFigures[] = [];
    for (let i = 0; i < PLAN.rounds; i++) at80.push(await run('service', PLAN.durationSec, offered));
    const at80pct = { ...medianOf(at80), offered_rps: offered };
    log(
      `${m.key}: service at 80 % (${offered} req/s offered): p99 ${at80pct.p99_ms} ms, loop p99 ${at80pct.loop_lag_p99_ms} ms`,
    );
    // --- tail: at 40 % and 80 % of the naive Functions app's maximum, service and peer alternating by round
    const tail = await tailSection(m.key, agg['naive_functions'] as RunFigures, (name, rate) =>
      run(name, PLAN.tailSec, rate),
    );
    const batchEndpoint = await batchEndpointRun((servers['service'] as ServerChild).url);
    log(
      `${m.key}: batch endpoint (${BATCH_EVENTS} events × ${BATCH_CONNECTIONS} conns): ${batchEndpoint.events_per_s} events/s, non2xx ${batchEndpoint.non2xx}`,
    );
    const bare = agg['bare'] as RunFigures;
    const naive = agg['naive'] as RunFigures;
    const naiveFunctions = agg['naive_functions'] as RunFigures;
    const extra = Object.fromEntries(
      names.filter((n) => n.startsWith('service_')).map((n) => [n, { ...agg[n], mode: n.slice('service_'.length) }]),
    );
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    const overload = await overloadOn(m.key, { ...serviceEnv, INFERENCE_MODE: defaultMode });
    log(`${m.key}: burst scenario (fresh servers, client in its own process)`);
    const burst: BurstSection = await burstScenario(
      { ...serviceEnv, INFERENCE_MODE: defaultMode },
      { BENCH_MODEL: m.file, BENCH_REDIS_URL: REDIS_URL },
      body,
      PLAN.warmSec,
      (msg) => log(`${m.key}: ${msg}`),
    );
    return {
      model: { file: path.relative(appRoot(), m.file), bytes, source: m.source },
      bare,
      naive,
      naive_functions: naiveFunctions,
      raw,
      service: { ...service, mode: defaultMode, at_80pct: at80pct },
      tail,
      batch_endpoint: batchEndpoint,
      ...extra,
      max_64: overload.max,
      overload: { ...overload.overload, admission_after: overload.admission_after },
      burst,
      ratios: {
        ...ratios(bare, naive, raw, service, naiveFunctions),
        overload_goodput_vs_max: overload.overload_goodput_vs_max,
        // against raw ORT at the service's thread count (one worker, one intra-op thread), best batch size
        batch_endpoint_vs_raw:
          Math.round((batchEndpoint.events_per_s / Math.max(1, raw.rps_best_t1 ?? raw.rps_best)) * 1000) / 1000,
        // the medians of the per-round paired ratios (each round's service against that round's peer)
        service_vs_naive_functions: ratiosSpread.service_vs_naive_functions.median,
        naive_functions_vs_naive: ratiosSpread.naive_functions_vs_naive.median,
        service_vs_naive: ratiosSpread.service_vs_naive.median,
      },
      ratios_spread: ratiosSpread,
    };
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}

/**
 * The tail section (`<model>.tail`): offered rates of 40 % and 80 % of the naive Functions app's maximum
 * (`peerMax`, its closed-loop median), open loop; at each rate the service and the naive Functions app alternate
 * over {@link PLAN}.rounds rounds. `ratio` is the median of the per-round ratios service p99 ÷ peer p99 (each
 * pair measured back to back), with its range; `loop_lag_p99_ms` the service's event-loop delay p99 (median).
 */
async function tailSection(
  key: string,
  peerMax: RunFigures,
  run: (name: string, rate: number) => Promise<RunFigures>,
): Promise<TailFigures> {
  const at = async (share: number): Promise<TailPoint> => {
    const offered = Math.max(1, Math.round(peerMax.rps * share));
    const svc: RunFigures[] = [];
    const peer: RunFigures[] = [];
    for (let r = 0; r < PLAN.rounds; r++) {
      const order = r % 2 === 0 ? ['service', 'naive_functions'] : ['naive_functions', 'service'];
      for (const name of order) (name === 'service' ? svc : peer).push(await run(name, offered));
    }
    const s = medianOf(svc);
    const p = medianOf(peer);
    const ratio = spreadOf(svc.map((f, r) => f.p99_ms / Math.max(0.01, peer[r]?.p99_ms ?? Number.NaN)));
    log(
      `${key}: tail at ${share * 100} % of the naive Functions app's max (${offered} req/s): p99 service ` +
        `${s.p99_ms} ms, naive_functions ${p.p99_ms} ms, ratio ${ratio.median} [${ratio.min}, ${ratio.max}], ` +
        `loop p99 ${s.loop_lag_p99_ms} ms`,
    );
    return {
      offered_rps: offered,
      service_p99_ms: s.p99_ms,
      peer_p99_ms: p.p99_ms,
      ratio: ratio.median,
      ratio_spread: ratio,
      loop_lag_p99_ms: s.loop_lag_p99_ms,
      peer_loop_lag_p99_ms: p.loop_lag_p99_ms,
      service: s,
      peer: p,
    };
  };
  return { peer_max_rps: peerMax.rps, at_40pct: await at(0.4), at_80pct: await at(0.8) };
}

const BATCH_EVENTS = 64;
const BATCH_CONNECTIONS = 8;
/**
 * The batch client's deadline (`x-deadline-ms`, the cap `REQUEST_DEADLINE_MAX_MS`): a bulk caller keeping 8 × 64
 * events in flight waits for the rows ahead of it (on the heavy model, several batch runs), which the default
 * batch deadline (`REQUEST_DEADLINE_MS` + `BATCH_DEADLINE_PER_EVENT_MS` per further event, 176 ms) does not cover:
 * the batcher then refuses what it predicts cannot finish in time.
 */
const BATCH_DEADLINE_MS = 2000;

/**
 * `POST /api/score/batch` with {@link BATCH_EVENTS}-event bodies on {@link BATCH_CONNECTIONS} closed-loop
 * connections, each request declaring {@link BATCH_DEADLINE_MS}: events/s answered 200, and every non-2xx.
 */
async function batchEndpointRun(url: string): Promise<BatchEndpointFigures> {
  const batchBody = (): string => `{"events":[${Array.from({ length: BATCH_EVENTS }, () => body()).join(',')}]}`;
  const runs: RunFigures[] = [];
  for (let i = 0; i < PLAN.rounds; i++)
    runs.push(
      await loadRun({
        url,
        path: '/api/score/batch',
        body: batchBody,
        connections: BATCH_CONNECTIONS,
        durationSec: PLAN.durationSec,
        headers: { 'x-deadline-ms': String(BATCH_DEADLINE_MS) },
      }),
    );
  const med = medianOf(runs);
  return {
    events_per_s: Math.round(med.rps * BATCH_EVENTS),
    requests_per_s: med.rps,
    p99_ms: med.p99_ms,
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    connections: BATCH_CONNECTIONS,
    batch: BATCH_EVENTS,
    deadline_ms: BATCH_DEADLINE_MS,
    rounds: runs.length,
    events_per_s_range: [
      Math.min(...runs.map((r) => r.rps * BATCH_EVENTS)),
      Math.max(...runs.map((r) => r.rps * BATCH_EVENTS)),
    ],
  };
}

/** The overload scenario (bench/overload.ts) on a freshly started service, alone on the machine. */
async function overloadOn(key: string, env: Record<string, string>): Promise<OverloadFigures> {
  log(`${key}: overload scenario (fresh service)`);
  const server = await startServer('servers/service', env);
  try {
    return await overloadScenario(server, body, PLAN, (msg) => log(`${key}: ${msg}`));
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const root = appRoot();
  const started = Date.now();
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  await seedNaiveProfiles(redis); // half the users have a profile
  const figures: Record<string, ModelFigures> = {};
  let telemetry: TelemetryFigures | undefined;
  let refusal: RefusalFigures | undefined;
  let learning: LearningFigures | undefined;
  try {
    for (const m of await models(root)) figures[m.key] = await benchModel(m);
    log('refusal cost: 503s per second refused in the app vs 200s per second served (small model)');
    const refusalEnv = {
      MODEL_DIR: path.join(root, 'models'),
      MODEL_NAME: 'fraud',
      LOG_LEVEL: 'error',
      REDIS_URL,
      REDIS_KEY_PREFIX: 'bench:ref:',
      ADMISSION_MAX_INFLIGHT: '1',
      ADMISSION_MIN_INFLIGHT: '1',
    };
    refusal = await refusalScenario(
      (kind) =>
        kind === 'serving'
          ? startServer('servers/service', {
              ...refusalEnv,
              ADMISSION_MAX_INFLIGHT: '1024',
              ADMISSION_MIN_INFLIGHT: '16',
            })
          : startServer('servers/refusing', refusalEnv),
      body,
      PLAN.durationSec,
      log,
    );
    log('telemetry: tracing off vs on vs as deployed (small model)');
    const telemetryOptions = {
      env: {
        MODEL_DIR: path.join(root, 'models'),
        MODEL_NAME: 'fraud',
        LOG_LEVEL: 'error',
        REDIS_URL,
        REDIS_KEY_PREFIX: 'bench:tel:',
      },
      ...PLAN,
      body,
      log,
    };
    telemetry = await benchTelemetry(telemetryOptions);
    const runtime = await secondNode(root);
    if (runtime !== undefined) {
      log(`telemetry under the second Node (${runtime.node})`);
      const second = await benchTelemetry({ ...telemetryOptions, runtime });
      telemetry = {
        ...telemetry,
        second_node: second,
        deployed_overhead_ratio_by_node: {
          [telemetry.node]: telemetry.deployed_overhead_ratio,
          [second.node]: second.deployed_overhead_ratio,
        },
      } as TelemetryFigures;
    }
    log('learning: decision log on vs off at 40 % of the maximum (small model)');
    learning = await benchLearning({
      env: {
        MODEL_DIR: path.join(root, 'models'),
        MODEL_NAME: 'fraud',
        LOG_LEVEL: 'error',
        REDIS_URL,
        REDIS_KEY_PREFIX: 'bench:learn:',
      },
      ...PLAN,
      log,
    });
  } finally {
    await deleteKeys(redis, 'bench:*');
    redis.disconnect();
  }
  const targets = checkTargets(figures);
  const out = {
    machine: machine(),
    settings: { quick: QUICK, ...PLAN, duration_total_s: Math.round((Date.now() - started) / 1000) },
    ...figures,
    refusal,
    telemetry,
    learning,
    targets,
  };
  await addAsyncBench(out, { quick: QUICK, log }); // async.single / async.batched (messages/s) and their ratio
  const dir = path.join(root, 'bench', 'results');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'bench.json'), `${JSON.stringify(out, null, 2)}\n`);
  await fs.writeFile(path.join(dir, 'bench-latency.svg'), latencySvg(figures));
  process.stdout.write(`\n${table(figures)}\n\n`);
  for (const [key, f] of Object.entries(figures)) process.stdout.write(`${key} ratios: ${JSON.stringify(f.ratios)}\n`);
  for (const [key, f] of Object.entries(figures))
    if (f.burst !== undefined)
      process.stdout.write(
        `${key} burst: deadline_2000 ${JSON.stringify(pick(f.burst.deadline_2000))}, default ${JSON.stringify(pick(f.burst.default))}, ` +
          `naive_functions ${f.burst.naive_functions.ok} × 200 (${f.burst.naive_functions.ok_within_deadline} within 50 ms), late_200s ${JSON.stringify(f.burst.late_200s)}\n`,
      );
  process.stdout.write(`rule of 8 (heavy): ${JSON.stringify(figures['heavy']?.raw.rule_of_8)}\n`);
  if (refusal !== undefined)
    process.stdout.write(`refusal: 503s per second ÷ 200s per second = ${refusal.refused_vs_served}\n`);
  if (learning !== undefined)
    process.stdout.write(
      `learning.p99_ratio ${learning.p99_ratio} (log on ${learning.log_on.p99_ms} ms / off ${learning.log_off.p99_ms} ms at ${learning.offered_rps} req/s; goal <= 1.05)\n`,
    );
  if (telemetry !== undefined)
    process.stdout.write(
      `telemetry (${telemetry.node}): off ${telemetry.off.rps} req/s, on ${telemetry.on.rps} req/s, overhead_ratio ${telemetry.overhead_ratio} (goal <= 0.05); deployed ${telemetry.deployed.rps} req/s, deployed_overhead_ratio ${telemetry.deployed_overhead_ratio}` +
        (telemetry.second_node === undefined
          ? ''
          : `; under ${telemetry.second_node.node}: deployed_overhead_ratio ${telemetry.second_node.deployed_overhead_ratio}`) +
        '\n',
    );
  for (const t of targets)
    process.stdout.write(`${t.met ? 'MET   ' : 'MISSED'} ${t.model}: ${t.target} = ${t.value} (goal ${t.goal})\n`);
  process.stdout.write(
    `\nwrote bench/results/bench.json and bench/results/bench-latency.svg (${out.settings.duration_total_s} s)\n`,
  );
  await runEscalationScenario(QUICK, log); // LLM escalation scenario: its own servers and bench/results/escalation.json
}

function pick(f: { ok: number; refused: number; other: number }): { ok: number; refused: number; other: number } {
  return { ok: f.ok, refused: f.refused, other: f.other };
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
