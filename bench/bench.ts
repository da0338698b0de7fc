/**
 * `npm run bench [-- --quick]`: every variant side by side on this machine, alternating runs.
 *
 * Models: `small` (the bundled fraud model) and `heavy` (a generated 17 → 3×2048 → 1 MLP, ≈ 34 MB,
 * under bench/models/). Variants: (a) `bare` Node HTTP server, (b) `naive` inline-ORT server with one
 * Redis GET per request, (c) `raw` in-process ORT (rows/s at batch 1 and at the best batch), (d)
 * `service` = this service via the local Functions host (default settings), plus the other inference
 * mode for comparison. Servers are child processes that measure their own event-loop lag.
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
import { checkTargets, latencySvg, ratios, table, type ModelFigures, type RawFigures } from './report';

const QUICK = process.argv.includes('--quick');
const PLAN = QUICK
  ? { rounds: 1, durationSec: 3, warmSec: 1, connections: 32, rateRuns: 1 }
  : { rounds: 3, durationSec: 10, warmSec: 2, connections: 32, rateRuns: 2 };
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const HEAVY_HIDDEN = [2048, 2048, 2048];

/** Distinct users the load spreads over (a realistic mix of warm and cold contexts, no single hot user). */
const USERS = 1000;
let seq = 0;
/** A valid payment event, a new transaction each time, from one of {@link USERS} users. */
function body(): string {
  seq++;
  return `{"transactionId":"tx-${seq}","userId":"user-${seq % USERS}","sessionId":"sess-1","amount":${(seq % 500) + 9.95},"currency":"EUR","merchantId":"m-991","merchantCategory":"5411","country":"FR","ipCountry":"FR","deviceId":"dev-abc","channel":"web","timestamp":"2026-11-30T10:15:00+01:00"}`;
}

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
    servers['service'] = await startServer('servers/service', { ...serviceEnv, INFERENCE_MODE: defaultMode });
    servers[`service_${altMode}`] = await startServer('servers/service', { ...serviceEnv, INFERENCE_MODE: altMode });
    const names = Object.keys(servers);
    const run = (name: string, durationSec: number, rate?: number): Promise<RunFigures> =>
      loadRun({
        url: (servers[name] as ServerChild).url,
        path: name === 'bare' || name === 'naive' ? '/score' : '/api/score',
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
    const bare = agg['bare'] as RunFigures;
    const naive = agg['naive'] as RunFigures;
    const extra = Object.fromEntries(
      names.filter((n) => n.startsWith('service_')).map((n) => [n, { ...agg[n], mode: n.slice('service_'.length) }]),
    );
    return {
      model: { file: path.relative(appRoot(), m.file), bytes, source: m.source },
      bare,
      naive,
      raw,
      service: { ...service, mode: defaultMode, at_80pct: at80pct },
      ...extra,
      ratios: ratios(bare, naive, raw, service),
    };
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
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

/** Deletes every key matching `pattern` (SCAN + UNLINK in chunks). */
async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length > 0) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
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
  try {
    for (const m of await models(root)) figures[m.key] = await benchModel(m);
  } finally {
    await deleteKeys(redis, 'bench:*');
    redis.disconnect();
  }
  const targets = checkTargets(figures);
  const out = {
    machine: await machine(),
    settings: { quick: QUICK, ...PLAN, duration_total_s: Math.round((Date.now() - started) / 1000) },
    ...figures,
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
  for (const t of targets)
    process.stdout.write(`${t.met ? 'MET   ' : 'MISSED'} ${t.model}: ${t.target} = ${t.value} (goal ${t.goal})\n`);
  process.stdout.write(
    `\nwrote bench/results/bench.json and bench/results/bench-latency.svg (${out.settings.duration_total_s} s)\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
