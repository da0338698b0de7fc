/**
 * Context-cache benchmark (`npm run bench:cache`): latency of an L1 hit, an L2 hit and a miss (µs,
 * p50/p99); compression of realistic contexts; hit ratio on a Zipf(1.1) workload over 100k users; and
 * throughput of the scoring endpoint with the cache against plain per-request Redis GETs, side by side.
 * Prints the figures and writes bench/results/cache.json. Needs Redis at REDIS_URL (default 127.0.0.1:6379).
 *
 * Inference is a cheap stand-in (test/context/fake-model) so the endpoint figures isolate the context path.
 * The endpoint variants run in alternating rounds (medians reported): the machine is small and shared.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { createEngine } from '../lib/app';
import { loadConfig } from '../lib/config/config';
import { Codec } from '../lib/context/codec';
import type { ContextLookup, ContextProvider } from '../lib/context/context-provider';
import { RedisProfileSource } from '../lib/context/context-source';
import { contextJson, encodeContext } from '../lib/context/context-value';
import { ContextKeys } from '../lib/context/keys';
import { L1Cache } from '../lib/context/l1-cache';
import { seedProfiles } from '../lib/context/profile-seeder';
import { asUserProfile } from '../lib/context/profile-schema';
import { RedisContextCache } from '../lib/context/redis-cache';
import { baseRedisOptions, parseRedisConnectionString } from '../lib/platform/redis/connection';
import { RedisVelocityStore } from '../lib/context/redis-velocity';
import { mulberry32, syntheticProfile, syntheticUserId, zipfSampler } from '../lib/context/synthetic-profiles';
import { TieredContextCache } from '../lib/context/tiered-cache';
import { withTimeout } from '../lib/platform/with-timeout';
import { toProblem } from '../lib/errors/errors';
import { EMPTY_VELOCITY } from '../lib/domain/user-context';
import type { PaymentEvent } from '../lib/domain/payment-event';
import { fakeBackendFactory, fakeModelSource } from '../test/context/fake-model';

const USERS = 100_000;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const r1 = (v: number) => Math.round(v * 10) / 10;
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;

/** Runs `op` n times in sequence; returns p50/p99 in µs. */
async function latency(
  n: number,
  op: (i: number) => Promise<unknown>,
): Promise<{ p50_us: number; p99_us: number; n: number }> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await op(i);
    out.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  out.sort((a, b) => a - b);
  return { p50_us: r1(pct(out, 0.5)), p99_us: r1(pct(out, 0.99)), n };
}

async function latencies(client: Redis, keys: ContextKeys) {
  const l1 = new L1Cache({ maxEntries: 50_000, maxBytes: 64 << 20, ttlMs: 30_000 });
  const tiered = new TieredContextCache({ l1, l2: new RedisContextCache(client, { keys, ttlMs: 240_000 }) });
  const source = new RedisProfileSource(client, keys);
  const key = (i: number) => keys.ctx(syntheticUserId(i), 'bench');
  for (let i = 0; i < 5000; i++) await tiered.set(key(i), { profile: syntheticProfile(i) });
  const l1_hit = await latency(50_000, () => tiered.lookup(key(0)));
  const l2_hit = await latency(5000, (i) => (l1.removeKey(key(i).key), tiered.lookup(key(i))));
  const miss = await latency(5000, async (i) => {
    const k = key(10_000 + i);
    if ((await tiered.lookup(k)) === undefined) await tiered.set(k, { profile: await source.load(k.userId) });
  });
  return {
    l1_hit,
    l2_hit,
    miss,
    note: 'miss = L2 GET (miss) + origin GET profile:{userId} + L2 write (SET + index, one script) + L1 fill; sequential, one at a time',
  };
}

function compression() {
  let raw = 0,
    enc = 0,
    lz4 = 0;
  const n = 10_000;
  for (let i = 0; i < n; i++) {
    const value = { profile: syntheticProfile(i) };
    const frame = encodeContext(value, Date.now());
    raw += Buffer.byteLength(contextJson(value, Date.now()));
    enc += frame.length;
    if (frame[3] === Codec.Lz4Block) lz4++;
  }
  return {
    contexts: n,
    mean_json_bytes: r1(raw / n),
    mean_stored_bytes: r1(enc / n),
    smaller_pct: r1((1 - enc / raw) * 100),
    lz4_codec_share_pct: r1((lz4 / n) * 100),
    target_smaller_pct: 60,
  };
}

/**
 * Zipf(1.1) over 100k users through L1 (default settings) over Redis L2 (TTL 240 s), on a simulated clock
 * at `rps` requests per second: 300 simulated seconds of warm-up (past the L2 TTL: steady state), then 100
 * measured. A miss loads the synthetic profile and fills both tiers.
 */
async function hitRatio(client: Redis, keys: ContextKeys, rps: number) {
  let t = Date.now();
  const now = () => t;
  const l1 = new L1Cache({ maxEntries: 50_000, maxBytes: 64 << 20, ttlMs: 30_000, now });
  const tiered = new TieredContextCache({ l1, l2: new RedisContextCache(client, { keys, ttlMs: 240_000, now }) });
  const next = zipfSampler(USERS, 1.1, mulberry32(42));
  const counts = { l1: 0, l2: 0, miss: 0 };
  const run = async (requests: number, count: boolean) => {
    for (let done = 0; done < requests; done += 100) {
      await Promise.all(
        Array.from({ length: 100 }, async () => {
          t += 1000 / rps;
          const u = next();
          const k = keys.ctx(syntheticUserId(u));
          const found = await tiered.lookup(k);
          if (count) counts[found?.tier ?? 'miss']++;
          if (found === undefined) await tiered.set(k, { profile: syntheticProfile(u) });
        }),
      );
    }
  };
  await run(rps * 300, false);
  await run(rps * 100, true);
  await cleanup(client, keys.prefix);
  const total = counts.l1 + counts.l2 + counts.miss;
  const pctOf = (n: number) => r1((n / total) * 100);
  return {
    simulated_rps: rps,
    measured_requests: total,
    hit_pct: pctOf(counts.l1 + counts.l2),
    l1_hit_pct: pctOf(counts.l1),
    l2_hit_pct: pctOf(counts.l2),
    miss_pct: pctOf(counts.miss),
  };
}

/** The baseline: no cache, a GET of the profile (plus the same velocity script) on every request. */
class PlainRedisProvider implements ContextProvider {
  private readonly velocity: RedisVelocityStore;
  constructor(
    private readonly client: Redis,
    private readonly keys: ContextKeys,
    private readonly timeoutMs: number,
  ) {
    this.velocity = new RedisVelocityStore(client, { keys });
  }
  async lookup(e: PaymentEvent): Promise<ContextLookup> {
    const degraded: ContextLookup = { context: { profile: null, velocity: EMPTY_VELOCITY }, cache: 'degraded' };
    if (this.client.status !== 'ready') return degraded;
    try {
      const p = {
        userId: e.userId,
        transactionId: e.transactionId,
        amount: e.amount,
        country: e.country,
        at: Date.now(),
      };
      const [text, velocity] = await withTimeout(
        Promise.all([this.client.get(this.keys.profile(e.userId)), this.velocity.record(p)]),
        this.timeoutMs,
      );
      return {
        context: { profile: text === null ? null : (asUserProfile(JSON.parse(text)) ?? null), velocity },
        cache: 'miss',
      };
    } catch {
      return degraded;
    }
  }
  async dispose(): Promise<void> {
    this.client.disconnect();
  }
}

/** Child process: the scoring endpoint (`POST /api/score`) around `engine.score`, with one context variant. */
async function serve(variant: string, prefix: string): Promise<void> {
  const config = loadConfig({ REDIS_URL, REDIS_KEY_PREFIX: prefix, LOG_LEVEL: 'error' });
  let context: ContextProvider | undefined;
  if (variant === 'plain') {
    const client = new Redis({ ...baseRedisOptions(config.redis.timeoutMs), ...parseRedisConnectionString(REDIS_URL) });
    await client.connect();
    context = new PlainRedisProvider(client, new ContextKeys(prefix), config.redis.timeoutMs);
  }
  const engine = await createEngine(config, {
    modelSource: fakeModelSource,
    backendFactory: fakeBackendFactory,
    ...(context === undefined ? {} : { context }),
  });
  await engine.start();
  const counts: Record<string, number> = { hit: 0, miss: 0, degraded: 0 };
  const server = http.createServer((req, res) => {
    if (req.url === '/stats') return void res.end(JSON.stringify(counts));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      engine.score(JSON.parse(Buffer.concat(chunks).toString('utf8'))).then(
        (r) => (
          (counts[r.cache] = (counts[r.cache] ?? 0) + 1),
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(r))
        ),
        (err: unknown) =>
          res
            .writeHead(toProblem(err).status, { 'content-type': 'application/problem+json' })
            .end(JSON.stringify(toProblem(err))),
      );
    });
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));
  process.on('disconnect', () => void engine.dispose().finally(() => process.exit(0)));
}

/** Fills L2 with every user's context, as a long-running fleet would have it (the "warm" variant). */
async function prefillL2(client: Redis, keys: ContextKeys): Promise<void> {
  const l2 = new RedisContextCache(client, { keys, ttlMs: 240_000 });
  for (let i = 0; i < USERS; i += 1000)
    await Promise.all(
      Array.from({ length: 1000 }, (_, j) =>
        l2.set(keys.ctx(syntheticUserId(i + j)), { profile: syntheticProfile(i + j) }),
      ),
    );
}

/** A scoring server child process. */
interface Server {
  readonly variant: string;
  measure(durationSec: number): Promise<{
    rps: number;
    p50_ms: number;
    p99_ms: number;
    non2xx: number;
    errors: number;
    cache: Record<string, number>;
  }>;
  stop(): Promise<void>;
}

async function startServer(variant: 'cache' | 'plain', prefix: string): Promise<Server> {
  const child: ChildProcess = fork(__filename, ['--serve', variant, prefix], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', () => reject(new Error(`${variant} server exited`)));
  });
  const next = zipfSampler(USERS, 1.1, mulberry32(variant.length));
  let n = 0;
  const base = {
    amount: 42.5,
    currency: 'EUR',
    merchantId: 'm-1',
    merchantCategory: '5411',
    country: 'FR',
    channel: 'web',
    timestamp: '2026-11-30T10:15:00Z',
  };
  const requests = [
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      setupRequest: (req: object) => ({
        ...req,
        body: JSON.stringify({ ...base, userId: syntheticUserId(next()), transactionId: `${variant}-${n++}` }),
      }),
    },
  ];
  const stats = async () => (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as Record<string, number>;
  return {
    variant,
    measure: async (duration) => {
      const before = await stats();
      const r = await autocannon({ url: `http://127.0.0.1:${port}/api/score`, connections: 32, duration, requests });
      const after = await stats();
      const cache = Object.fromEntries(Object.keys(after).map((k) => [k, (after[k] ?? 0) - (before[k] ?? 0)]));
      return {
        rps: Math.round(r.requests.average),
        p50_ms: r.latency.p50,
        p99_ms: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors,
        cache,
      };
    },
    stop: async () => {
      child.disconnect();
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/**
 * Endpoint throughput, cache against plain GETs. The cold start is measured once (empty caches); then L2
 * is filled and the two variants run in alternating 5-s rounds, so a noisy neighbour hits both alike:
 * the figures are medians over the rounds, and the ratio is the median of per-round ratios.
 */
async function endpoint(prefix: string, client: Redis) {
  const [plain, cache] = [await startServer('plain', prefix), await startServer('cache', prefix)];
  try {
    await plain.measure(2); // warm-up (JIT, connections)
    const cold = await cache.measure(10);
    await prefillL2(client, new ContextKeys(prefix));
    await cache.measure(3);
    const rounds: { plain: Awaited<ReturnType<Server['measure']>>; warm: Awaited<ReturnType<Server['measure']>> }[] =
      [];
    for (let i = 0; i < 4; i++) rounds.push({ plain: await plain.measure(5), warm: await cache.measure(5) });
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
    const summary = (k: 'plain' | 'warm') => ({
      rps: median(rounds.map((r) => r[k].rps)),
      p50_ms: median(rounds.map((r) => r[k].p50_ms)),
      p99_ms: median(rounds.map((r) => r[k].p99_ms)),
      cache: rounds.reduce<Record<string, number>>(
        (acc, r) => (Object.entries(r[k].cache).forEach(([c, v]) => (acc[c] = (acc[c] ?? 0) + v)), acc),
        {},
      ),
      rounds_rps: rounds.map((r) => r[k].rps),
    });
    const ratio = Math.round(median(rounds.map((r) => r.warm.rps / r.plain.rps)) * 100) / 100;
    return { cold, plain: summary('plain'), warm: summary('warm'), warm_vs_plain_rps: ratio };
  } finally {
    await plain.stop();
    await cache.stop();
  }
}

async function cleanup(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000);
    cursor = next;
    if (keys.length > 0) await client.unlink(...keys);
  } while (cursor !== '0');
}

async function main(): Promise<void> {
  const client = new Redis({ ...parseRedisConnectionString(REDIS_URL), lazyConnect: true });
  await client.connect();
  const prefix = `bench:cache:${randomUUID().slice(0, 8)}:`;
  const keys = new ContextKeys(prefix);
  try {
    console.log(`seeding ${USERS} profiles…`);
    await seedProfiles(client, keys, USERS);
    const lat = await latencies(client, keys);
    console.log('latency (µs)        p50      p99');
    for (const [k, v] of Object.entries(lat))
      if (typeof v === 'object')
        console.log(`  ${k.padEnd(16)} ${String(v.p50_us).padStart(7)}  ${String(v.p99_us).padStart(7)}`);
    const comp = compression();
    console.log(
      `compression: ${comp.mean_json_bytes} B JSON → ${comp.mean_stored_bytes} B stored (${comp.smaller_pct} % smaller; LZ4 chosen for ${comp.lz4_codec_share_pct} %; target ≥ 60 %)`,
    );
    const hits = [];
    for (const rps of [500, 1000, 2000]) {
      const h = await hitRatio(client, new ContextKeys(`${prefix}sim:`), rps);
      hits.push(h);
      console.log(
        `hit ratio, Zipf(1.1) over ${USERS} users at ${rps} req/s: ${h.hit_pct} % (L1 ${h.l1_hit_pct} %, L2 ${h.l2_hit_pct} %; target ≥ 90 %)`,
      );
    }
    const ep = await endpoint(prefix, client);
    console.log('endpoint (32 connections)               req/s   p50 ms  p99 ms  answers');
    for (const [k, v] of Object.entries({
      'cache, cold start (10 s)': ep.cold,
      'plain GET per request (median)': ep.plain,
      'cache, L2 warm (median)': ep.warm,
    })) {
      console.log(
        `  ${k.padEnd(36)} ${String(v.rps).padStart(6)}  ${String(v.p50_ms).padStart(6)}  ${String(v.p99_ms).padStart(6)}  ${JSON.stringify(v.cache)}`,
      );
    }
    console.log(
      `  cache (L2 warm) / plain throughput: ${ep.warm_vs_plain_rps}× (median of 4 alternating 5-s rounds; plain ${ep.plain.rounds_rps.join(', ')}; cache ${ep.warm.rounds_rps.join(', ')})`,
    );
    const out = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, node: process.version, loadavg_1m_at_end: Math.round(os.loadavg()[0] ?? 0) },
      latency_us: lat,
      compression: comp,
      hit_ratio: {
        users: USERS,
        zipf_s: 1.1,
        l1: '50 000 entries, TTL 30 s',
        l2_ttl_s: 240,
        target_hit_pct: 90,
        runs: hits,
      },
      endpoint: { connections: 32, ...ep },
    };
    fs.mkdirSync(path.join(__dirname, '..', '..', 'bench', 'results'), { recursive: true });
    fs.writeFileSync(
      path.join(__dirname, '..', '..', 'bench', 'results', 'cache.json'),
      `${JSON.stringify(out, null, 2)}\n`,
    );
  } finally {
    await cleanup(client, prefix);
    client.disconnect();
  }
}

if (process.argv[2] === '--serve') void serve(process.argv[3] ?? 'cache', process.argv[4] ?? 'bench:');
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
