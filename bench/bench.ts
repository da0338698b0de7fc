/**
 * `npm run bench [-- --quick]`: every variant side by side on this machine, alternating runs.
 *
 * Models: `small` (the bundled fraud model) and `heavy` (a generated 17 → 3×2048 → 1 MLP, ≈ 34 MB,
 * under bench/models/). Variants: (a) `bare` Node HTTP server, (b) `naive` inline-ORT server with one
 * Redis GET per request, (c) `raw` in-process ORT (rows/s at batch 1 and at the best batch), (d)
 * `service` = this service via the local Functions host (default settings), plus the other inference
 * mode for comparison, (e) `naive_functions`: the naive app written as an Azure Function (real
 * `@azure/functions`) served by the same local host: the service's fair peer. `bare` and `naive` stay as
 * host-free references (`naive_functions_vs_naive` is what the host layer costs). The service also runs
 * at fixed rates: 80 % and 40 % of its own maximum. Servers are child processes that measure their own
 * event-loop lag. Then the overload scenario (bench/overload.ts): `<model>.overload` and
 * `<model>.ratios.overload_goodput_vs_max`; and the refusal cost (`refusal`: 503s per second when every
 * request is refused at the host's door vs inside the function handler, `refusal.door_vs_handler`).
 * Writes bench/results/bench.json and bench/results/bench-latency.svg; prints a table.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { appRoot } from '../lib/config/app-root';
import { resolveMode, type InferenceMode } from '../lib/inference/backend-factory';
import { addAsyncBench } from './async';
import { runJob, startServer, type ServerChild } from './children';
import { loadRun, medianOf, type RunFigures } from './load';
import { writeRandomModel } from './model-fixture';
import { runEscalationScenario } from './escalation';
import { overloadScenario, refusalScenario, type OverloadFigures, type RefusalFigures } from './overload';
import { paymentBody, USERS } from './payment-body';
import { deleteKeys } from './redis-keys';
import {
  checkTargets,
  latencySvg,
  ratios,
  table,
  type BatchEndpointFigures,
  type ModelFigures,
  type RawFigures,
} from './report';
import { benchLearning, type LearningFigures } from './learning';
import { benchTelemetry, type TelemetryFigures } from './telemetry';

const QUICK = process.argv.includes('--quick');
const PLAN = QUICK
  ? { rounds: 1, durationSec: 3, warmSec: 1, connections: 32, rateRuns: 1 }
  : { rounds: 3, durationSec: 10, warmSec: 2, connections: 32, rateRuns: 2 };
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
    REDIS_KEY_PREFIX: 'bench:svc:',
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
    const offered = Math.max(1, Math.round(service.rps * 0.8));
    const at80: RunFigures[] = [];
    for (let i = 0; i < PLAN.rateRuns; i++) at80.push(await run('service', PLAN.durationSec, offered));
    const at80pct = { ...medianOf(at80), offered_rps: offered };
    log(
      `${m.key}: service at 80 % (${offered} req/s offered): p99 ${at80pct.p99_ms} ms, loop p99 ${at80pct.loop_lag_p99_ms} ms`,
    );
    const at40offered = Math.max(1, Math.round(service.rps * 0.4));
    const at40runs: RunFigures[] = [];
    for (let i = 0; i < PLAN.rateRuns; i++) at40runs.push(await run('service', PLAN.durationSec, at40offered));
    const at40 = medianOf(at40runs);
    // the fair peer and the host-free reference at the same offered rate: whose tail is it?
    const peerAt40 = async (name: string): Promise<{ p50_ms: number; p99_ms: number; max_ms: number }> => {
      const runs: RunFigures[] = [];
      for (let i = 0; i < PLAN.rateRuns; i++) runs.push(await run(name, PLAN.durationSec, at40offered));
      const m = medianOf(runs);
      return { p50_ms: m.p50_ms, p99_ms: m.p99_ms, max_ms: m.max_ms };
    };
    const peersAt40 = { naive_functions: await peerAt40('naive_functions'), naive: await peerAt40('naive') };
    const serviceAt40 = {
      offered: at40offered,
      rps: at40.rps,
      p50_ms: at40.p50_ms,
      p99_ms: at40.p99_ms,
      max_ms: at40.max_ms,
      loop_lag_p99_ms: at40.loop_lag_p99_ms,
      non2xx: at40.non2xx,
      peers: peersAt40,
    };
    log(
      `${m.key}: at 40 % (${at40offered} req/s offered): p99 service ${at40.p99_ms} ms, ` +
        `naive_functions ${peersAt40.naive_functions.p99_ms} ms, naive ${peersAt40.naive.p99_ms} ms`,
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
    return {
      model: { file: path.relative(appRoot(), m.file), bytes, source: m.source },
      bare,
      naive,
      naive_functions: naiveFunctions,
      raw,
      service: { ...service, mode: defaultMode, at_80pct: at80pct },
      service_at_40pct: serviceAt40,
      batch_endpoint: batchEndpoint,
      ...extra,
      max_64: overload.max,
      overload: { ...overload.overload, admission_after: overload.admission_after },
      ratios: {
        ...ratios(bare, naive, raw, service, naiveFunctions),
        overload_goodput_vs_max: overload.overload_goodput_vs_max,
        // against raw ORT at the service's thread count (one worker, one intra-op thread), best batch size
        batch_endpoint_vs_raw:
          Math.round((batchEndpoint.events_per_s / Math.max(1, raw.rps_best_t1 ?? raw.rps_best)) * 1000) / 1000,
      },
    };
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}

const BATCH_EVENTS = 64;
const BATCH_CONNECTIONS = 8;

/**
 * `POST /api/score/batch` with {@link BATCH_EVENTS}-event bodies on {@link BATCH_CONNECTIONS} closed-loop
 * connections (its default deadline scales with the events): events/s answered 200, and every non-2xx.
 */
async function batchEndpointRun(url: string): Promise<BatchEndpointFigures> {
  const batchBody = (): string => `{"events":[${Array.from({ length: BATCH_EVENTS }, () => body()).join(',')}]}`;
  const runs: RunFigures[] = [];
  for (let i = 0; i < PLAN.rateRuns; i++)
    runs.push(
      await loadRun({
        url,
        path: '/api/score/batch',
        body: batchBody,
        connections: BATCH_CONNECTIONS,
        durationSec: PLAN.durationSec,
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

async function machine(): Promise<Record<string, unknown>> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ortVersion = (require('onnxruntime-node/package.json') as { version: string }).version;
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memory_gb: Math.round(os.totalmem() / 1024 ** 3),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    onnxruntime: ortVersion,
    date: new Date().toISOString(),
  };
}

async function main(): Promise<void> {
  const root = appRoot();
  const started = Date.now();
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const profile = JSON.stringify({
    homeCountry: 'FR',
    usualAmount: 80,
    knownDevices: ['dev-abc'],
    accountCreatedAt: '2024-01-01T00:00:00Z',
  });
  const setup = redis.pipeline();
  for (let u = 0; u < USERS; u += 2) setup.set(`bench:naive:profile:user-${u}`, profile); // half the users have a profile
  await setup.exec();
  const figures: Record<string, ModelFigures> = {};
  let telemetry: TelemetryFigures | undefined;
  let refusal: RefusalFigures | undefined;
  let learning: LearningFigures | undefined;
  try {
    for (const m of await models(root)) figures[m.key] = await benchModel(m);
    log('refusal cost: at the host door vs inside the handler (small model)');
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
      (at) => startServer('servers/refusing', { ...refusalEnv, REFUSE_AT: at }),
      body,
      PLAN.durationSec,
      log,
    );
    log('telemetry: tracing off vs on vs as deployed (small model)');
    telemetry = await benchTelemetry({
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
    });
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
    machine: await machine(),
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
  process.stdout.write(`rule of 8 (heavy): ${JSON.stringify(figures['heavy']?.raw.rule_of_8)}\n`);
  if (refusal !== undefined)
    process.stdout.write(`refusal: door ÷ handler 503s per second = ${refusal.door_vs_handler}\n`);
  if (learning !== undefined)
    process.stdout.write(
      `learning.p99_ratio ${learning.p99_ratio} (log on ${learning.log_on.p99_ms} ms / off ${learning.log_off.p99_ms} ms at ${learning.offered_rps} req/s; goal <= 1.05)\n`,
    );
  if (telemetry !== undefined)
    process.stdout.write(
      `telemetry: off ${telemetry.off.rps} req/s, on ${telemetry.on.rps} req/s, overhead_ratio ${telemetry.overhead_ratio} (goal <= 0.05); deployed ${telemetry.deployed.rps} req/s, deployed_overhead_ratio ${telemetry.deployed_overhead_ratio}\n`,
    );
  for (const t of targets)
    process.stdout.write(`${t.met ? 'MET   ' : 'MISSED'} ${t.model}: ${t.target} = ${t.value} (goal ${t.goal})\n`);
  process.stdout.write(
    `\nwrote bench/results/bench.json and bench/results/bench-latency.svg (${out.settings.duration_total_s} s)\n`,
  );
  await runEscalationScenario(QUICK, log); // LLM escalation scenario: its own servers and bench/results/escalation.json
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
