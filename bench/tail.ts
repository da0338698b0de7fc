/**
 * `npm run bench:tail [-- --quick] [-- --model small|heavy]`: where the service's tail at light load comes from.
 *
 * For each model: the naive Functions app (the fair peer) and the service, each in its own process under the
 * same local host. The naive app's maximum (closed loop, 32 connections) sets the offered rate: 40 % of it.
 * Then, alternating the two variants over rounds, an open-loop load at that rate (test/support/load/open-loop.ts; the
 * client is this process), each run under the tail probe (bench/servers/probe.ts): a CPU profile of the
 * server's main thread, a sampling heap profile, its GC pauses and its event-loop delay.
 *
 * Reported per variant in bench/results/tail.json:
 * - `latency`: the client's p50/p99/max (ms, from each request's due time), median over the rounds;
 * - `stages` (the service): per request, the client's latency, the server's time from the request event to
 *   the response (when HTTP reaches the app's thread), the batcher/pool wait (`timing.queueMs`) and the
 *   inference (`timing.inferenceMs`), as p50/p99;
 * - `loop_delay`: the server's event-loop delay p50/p99/max;
 * - `gc`: scavenges and mark-compacts (count, p99 and max pause, heap used after);
 * - `profile`: the delay attribution ({@link analyzeProfile}): stalls over 5 ms, what they spent their time
 *   in and which callback started them; self time over the whole run;
 * - `allocations`: bytes allocated per component and function (sampling heap profile);
 * - `sources`: the components that held the loop in stalls, largest first, with their share of stall time.
 *
 * The last round's profiles are saved gzipped as bench/results/tail-<model>-<variant>.cpuprofile.gz (open in
 * Chrome DevTools after gunzip). With bench/results/tail-baseline.json present (a tail.json of an earlier build,
 * kept for comparison), `before_after` puts both runs' figures side by side.
 */
import { machine } from './machine';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import Redis from 'ioredis';
import { appRoot } from '../lib/config/app-root';
import { resolveMode } from '../lib/inference/backend-factory';
import { startServer, type ServerChild } from './children';
import { loadRun } from './load';
import { writeRandomModel } from '../lib/training/random-model';
import { openLoop } from '../test/support/load/open-loop';
import { paymentBody } from '../test/support/load/payment-body';
import { deleteKeys } from './redis-keys';
import { bundledModelFile, seedNaiveProfiles } from './naive-profiles';
import { percentile } from '../test/support/load/percentile';
import {
  analyzeHeap,
  analyzeProfile,
  type CpuProfile,
  type HeapProfileNode,
  type ProfileSummary,
} from './profile-stalls';
import type { GcEntry, ProbeResult } from './servers/probe';

const QUICK = process.argv.includes('--quick');
const ONLY = process.argv.includes('--model') ? process.argv[process.argv.indexOf('--model') + 1] : undefined;
const PLAN = QUICK
  ? { rounds: 2, durationSec: 5, warmSec: 2, maxSec: 3 }
  : { rounds: 3, durationSec: 15, warmSec: 3, maxSec: 5 };
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const VARIANTS = ['service', 'naive_functions'] as const;
type Variant = (typeof VARIANTS)[number];

const log = (msg: string): void =>
  void process.stderr.write(`[tail ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const r2 = (v: number): number => Math.round(v * 100) / 100;
const med = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? Number.NaN;
};
const p = (sorted: readonly number[], q: number): number => r2(percentile(sorted, q));

interface Timing {
  readonly queueMs?: number;
  readonly inferenceMs?: number;
}

/** One probed run of one variant. */
interface ProbedRun {
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  readonly rps: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly probe: ProbeResult;
  readonly stages?: Record<string, { p50: number; p99: number }>;
  readonly profile: ProfileSummary;
  readonly allocations: ReturnType<typeof analyzeHeap>;
  readonly profileFile: string;
}

function gcSummary(gc: readonly GcEntry[], seconds: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kind of ['minor', 'major', 'incremental']) {
    const xs = gc.filter((g) => g.kind === kind);
    const ms = xs.map((g) => g.ms).sort((a, b) => a - b);
    const heap = xs.map((g) => g.heap_used_mb);
    out[kind] = {
      count: xs.length,
      per_s: r2(xs.length / seconds),
      p50_ms: p(ms, 50),
      p99_ms: p(ms, 99),
      max_ms: ms.at(-1) ?? 0,
      total_ms: r2(ms.reduce((s, v) => s + v, 0)),
      heap_used_after_mb: xs.length === 0 ? null : { first: heap[0], max: Math.max(...heap), last: heap.at(-1) },
    };
  }
  return out;
}

async function probedRun(server: ServerChild, variant: Variant, rate: number, file: string): Promise<ProbedRun> {
  const queue: number[] = [];
  const inference: number[] = [];
  const client: number[] = [];
  await fetch(`${server.url}/__bench/probe/start?file=${encodeURIComponent(file)}`).then((r) => r.text());
  const f = await openLoop({
    url: server.url,
    path: '/api/score',
    body: paymentBody,
    rate,
    durationSec: PLAN.durationSec,
    onAnswer: (ms, body) => {
      client.push(ms);
      const m = /"timing":(\{[^}]*\})/.exec(body);
      if (m === null) return;
      const t = JSON.parse(m[1] as string) as Timing;
      if (t.queueMs !== undefined) queue.push(t.queueMs);
      if (t.inferenceMs !== undefined) inference.push(t.inferenceMs);
    },
  });
  const probe = (await (await fetch(`${server.url}/__bench/probe/stop`)).json()) as ProbeResult;
  const profile = JSON.parse(await fs.readFile(file, 'utf8')) as CpuProfile;
  const heap = (JSON.parse(await fs.readFile(`${file}.heap.json`, 'utf8')) as { head: HeapProfileNode }).head;
  const summary = analyzeProfile(profile, 5);
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  const stage = (xs: number[]) => ({ p50: p(sorted(xs), 50), p99: p(sorted(xs), 99) });
  const stages =
    queue.length === 0
      ? undefined
      : {
          client_ms: stage(client),
          ...(probe.request_ms.length > 0 ? { server_ms: stage([...probe.request_ms]) } : {}),
          queue_ms: stage(queue),
          inference_ms: stage(inference),
        };
  log(
    `${variant} @${rate}/s: p99 ${f.p99_ms} ms (max ${f.max_ms}), loop p99 ${probe.loop_delay.p99_ms} ms, ` +
      `${summary.stalls.count} stalls > 5 ms (max ${summary.stalls.max_ms} ms), gc ${probe.gc.length}`,
  );
  return {
    p50_ms: f.p50_ms,
    p99_ms: f.p99_ms,
    max_ms: f.max_ms,
    rps: f.rps,
    non2xx: f.non2xx,
    errors: f.errors,
    probe,
    ...(stages === undefined ? {} : { stages }),
    profile: summary,
    allocations: analyzeHeap(heap),
    profileFile: file,
  };
}

/** The components that held the loop in stalls, largest first, with their share of all stall time. */
function sources(s: ProfileSummary): { component: string; stall_ms: number; share: number }[] {
  const total = Math.max(
    1e-9,
    s.stalls.by_component.reduce((a, [, v]) => a + v, 0),
  );
  return s.stalls.by_component.map(([c, v]) => ({ component: c, stall_ms: v, share: r2(v / total) }));
}

async function benchModel(key: 'small' | 'heavy', dir: string, file: string, out: string): Promise<unknown> {
  const bytes = (await fs.stat(file)).size;
  const servers: Partial<Record<Variant, ServerChild>> = {};
  try {
    servers.naive_functions = await startServer('servers/naive-functions', {
      BENCH_MODEL: file,
      BENCH_REDIS_URL: REDIS_URL,
    });
    servers.service = await startServer('servers/service', {
      MODEL_DIR: dir,
      MODEL_NAME: 'fraud',
      LOG_LEVEL: 'error',
      REDIS_URL,
      REDIS_KEY_PREFIX: `bench:tail:${key}:`, // per model: the fleet pointer lives under the prefix
      INFERENCE_MODE: resolveMode('auto', bytes),
    });
    const closed = (v: Variant, sec: number) =>
      loadRun({
        url: (servers[v] as ServerChild).url,
        path: '/api/score',
        body: paymentBody,
        connections: 32,
        durationSec: sec,
      });
    for (const v of VARIANTS) await closed(v, PLAN.warmSec);
    const max = await closed('naive_functions', PLAN.maxSec);
    const rate = Math.max(1, Math.round(max.rps * 0.4));
    log(`${key}: naive Functions app max ${max.rps} req/s → offered ${rate} req/s (40 %)`);
    const runs: Record<Variant, ProbedRun[]> = { service: [], naive_functions: [] };
    for (let r = 0; r < PLAN.rounds; r++) {
      const order = r % 2 === 0 ? VARIANTS : ([...VARIANTS].reverse() as Variant[]);
      for (const v of order) {
        const f = path.join(os.tmpdir(), `tail-${key}-${v}-${process.pid}.cpuprofile`);
        runs[v].push(await probedRun(servers[v] as ServerChild, v, rate, f));
      }
    }
    const result: Record<string, unknown> = { naive_functions_max_rps: max.rps, offered_rps: rate };
    for (const v of VARIANTS) {
      const xs = runs[v];
      const last = xs.at(-1) as ProbedRun;
      const saved = path.join(out, `tail-${key}-${v}.cpuprofile.gz`);
      await fs.writeFile(saved, gzipSync(await fs.readFile(last.profileFile)));
      for (const x of xs) {
        await fs.rm(x.profileFile, { force: true });
        await fs.rm(`${x.profileFile}.heap.json`, { force: true });
      }
      const allGc = xs.flatMap((x) => x.probe.gc);
      result[v] = {
        latency: {
          p50_ms: med(xs.map((x) => x.p50_ms)),
          p99_ms: med(xs.map((x) => x.p99_ms)),
          p99_runs_ms: xs.map((x) => x.p99_ms),
          max_ms: Math.max(...xs.map((x) => x.max_ms)),
          rps: med(xs.map((x) => x.rps)),
          non2xx: xs.reduce((s, x) => s + x.non2xx, 0),
          errors: xs.reduce((s, x) => s + x.errors, 0),
        },
        loop_delay: {
          p99_ms: med(xs.map((x) => x.probe.loop_delay.p99_ms)),
          max_ms: Math.max(...xs.map((x) => x.probe.loop_delay.max_ms)),
        },
        gc: gcSummary(allGc, xs.length * PLAN.durationSec),
        // process CPU per answered request (all threads), ms: robust to other processes on the cores
        cpu_ms_per_request: med(
          xs.map((x) => r2((x.probe.cpu_ms / Math.max(1, x.rps * PLAN.durationSec)) * 1000) / 1000),
        ),
        loop_utilization: med(xs.map((x) => x.probe.loop_utilization)),
        ...(last.stages === undefined ? {} : { stages: last.stages }),
        sources: sources(last.profile),
        profile: last.profile,
        allocations: last.allocations,
        saved_profile: path.relative(appRoot(), saved),
      };
    }
    const s = result['service'] as { latency: { p99_ms: number } };
    const n = result['naive_functions'] as { latency: { p99_ms: number } };
    result['p99_ratio_service_vs_naive_functions'] = r2(s.latency.p99_ms / Math.max(1e-9, n.latency.p99_ms));
    return result;
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}

/** `obj.a.b.c`, or undefined. */
function dig(obj: unknown, ...keys: string[]): unknown {
  let at = obj;
  for (const k of keys) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[k] : undefined;
  return at;
}

/** The figures to compare between two runs of one model. */
function headline(m: unknown): Record<string, unknown> {
  return {
    offered_rps: dig(m, 'offered_rps'),
    service_p99_ms: dig(m, 'service', 'latency', 'p99_ms'),
    peer_p99_ms: dig(m, 'naive_functions', 'latency', 'p99_ms'),
    ratio: dig(m, 'p99_ratio_service_vs_naive_functions'),
    loop_p99_ms: dig(m, 'service', 'loop_delay', 'p99_ms'),
    stalls: dig(m, 'service', 'profile', 'stalls', 'count'),
    stall_ms: dig(m, 'service', 'profile', 'stalls', 'total_ms'),
    unsampled_ms: dig(m, 'service', 'profile', 'stalls', 'unsampled_ms'),
    busy_share: dig(m, 'service', 'profile', 'busy_share'),
    cpu_ms_per_request: dig(m, 'service', 'cpu_ms_per_request'),
    peer_cpu_ms_per_request: dig(m, 'naive_functions', 'cpu_ms_per_request'),
    peer_busy_share: dig(m, 'naive_functions', 'profile', 'busy_share'),
    sources: (dig(m, 'service', 'sources') as unknown[] | undefined)?.slice(0, 6),
    gc: dig(m, 'service', 'gc'),
  };
}

async function main(): Promise<void> {
  const root = appRoot();
  const out = path.join(root, 'bench', 'results');
  await fs.mkdir(out, { recursive: true });
  const started = Date.now();
  const modelsDir = path.join(root, 'models');
  const modelFile = await bundledModelFile(modelsDir);
  const models: Record<string, unknown> = {};
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    await seedNaiveProfiles(redis);
    if (ONLY === undefined || ONLY === 'small') models['small'] = await benchModel('small', modelsDir, modelFile, out);
    if (ONLY === undefined || ONLY === 'heavy') {
      const heavyDir = path.join(root, 'bench', 'models', 'heavy');
      const heavyFile = await writeRandomModel(heavyDir, { hidden: [2048, 2048, 2048], seed: 7 });
      models['heavy'] = await benchModel('heavy', heavyDir, heavyFile, out);
    }
  } finally {
    await deleteKeys(redis, 'bench:tail:*');
    await deleteKeys(redis, 'bench:naive:*');
    redis.disconnect();
  }
  const baseline = await fs
    .readFile(path.join(out, 'tail-baseline.json'), 'utf8')
    .then((t) => JSON.parse(t) as { models?: Record<string, Record<string, unknown>>; machine?: unknown })
    .catch(() => undefined);
  const beforeAfter =
    baseline?.models === undefined
      ? undefined
      : Object.fromEntries(
          Object.keys(models).map((k) => [k, { before: headline(baseline.models?.[k]), after: headline(models[k]) }]),
        );
  const result = {
    machine: machine(),
    settings: {
      quick: QUICK,
      ...PLAN,
      stall_threshold_ms: 5,
      duration_total_s: Math.round((Date.now() - started) / 1000),
    },
    models,
    ...(beforeAfter === undefined ? {} : { before_after: beforeAfter }),
  };
  await fs.writeFile(path.join(out, 'tail.json'), `${JSON.stringify(result, null, 2)}\n`);
  for (const [k, m] of Object.entries(models)) process.stdout.write(`${k}: ${JSON.stringify(headline(m))}\n`);
  process.stdout.write(`wrote bench/results/tail.json (${result.settings.duration_total_s} s)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:tail failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
