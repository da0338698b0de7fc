/**
 * Asynchronous scoring throughput: N payment messages drained through the embedded Service Bus into the
 * app's real queue trigger (local host, Redis result store and locks, the bundled model), one message per
 * call (`single`: batch size 1 at host.json `maxConcurrentCalls` concurrent calls, what a `cardinality:
 * 'one'` trigger gets) against delivery batches (`batched`: up to host.json `maxMessageBatchSize` messages
 * per call, one batch at a time, as the Service Bus extension's batch loop runs them).
 *
 * Imported by bench.ts ({@link addAsyncBench}: writes `async.single`, `async.batched` and
 * `async.ratios.batched_vs_single`); run as a child process per measurement (env BENCH_ASYNC_MODE,
 * BENCH_ASYNC_MESSAGES, BENCH_REDIS_URL), printing one `RESULT {json}` line.
 */
import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import Redis from 'ioredis';
import { configureSharedEngine } from '../lib/app';
import { appRoot } from '../lib/config/app-root';
import { LocalHost } from '../local/host';
import { InProcessBus } from '../local/in-process-bus';
import { ServiceBusEmulator } from '../local/service-bus-emulator';
import { runJob } from './children';
import type { TargetCheck } from './report';

/** One drain. */
export interface DrainFigures {
  readonly messages_per_s: number;
  readonly messages: number;
  /** Messages per trigger call at most. */
  readonly batch_size: number;
  /** Trigger calls at once. */
  readonly concurrency: number;
  readonly elapsed_s: number;
  /** Results on the topic for the drained messages (must equal `messages`). */
  readonly published: number;
  /** Of those, results scored without the user's context (`cache: "degraded"`, e.g. a Redis timeout). */
  readonly degraded: number;
}

type Mode = 'single' | 'batched';
const TOPIC = 'risk-completed';
const QUEUE = 'payments';

function hostSettings(): { maxConcurrentCalls: number; maxMessageBatchSize: number } {
  const hostJson = JSON.parse(readFileSync(path.join(appRoot(), 'host.json'), 'utf8')) as {
    extensions?: { serviceBus?: { maxConcurrentCalls?: number; maxMessageBatchSize?: number } };
  };
  const sb = hostJson.extensions?.serviceBus;
  return { maxConcurrentCalls: sb?.maxConcurrentCalls ?? 16, maxMessageBatchSize: sb?.maxMessageBatchSize ?? 1000 };
}

function event(run: string, i: number): string {
  return `{"transactionId":"${run}-${i}","userId":"user-${i % 1000}","sessionId":"sess-1","amount":${(i % 500) + 9.95},"currency":"EUR","merchantId":"m-991","merchantCategory":"5411","country":"FR","ipCountry":"FR","deviceId":"dev-abc","channel":"web","timestamp":"2026-11-30T10:15:00+01:00"}`;
}

/** The child: drains `messages` messages in one mode and reports. */
async function drainJob(): Promise<void> {
  const mode = process.env['BENCH_ASYNC_MODE'] as Mode;
  const n = Number(process.env['BENCH_ASYNC_MESSAGES'] ?? 5000);
  const prefix = `bench:async:${mode}:${process.pid}:`;
  const redisUrl = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  Object.assign(process.env, {
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: prefix,
    SCORING_QUEUE: QUEUE,
    RESULTS_TOPIC: TOPIC,
    REJECTED_QUEUE: 'scoring-rejected',
    LOG_LEVEL: 'error',
  });
  const settings = hostSettings();
  const single = mode === 'single';
  const batchSize = single ? 1 : settings.maxMessageBatchSize;
  const concurrency = single ? settings.maxConcurrentCalls : 1;
  const bus = new InProcessBus();
  configureSharedEngine({ bus });
  const sb = new ServiceBusEmulator({
    bus,
    maxMessageBatchSize: batchSize,
    maxConcurrentCalls: concurrency,
    maxConcurrentBatches: concurrency,
  });
  const dir = path.join(appRoot(), 'dist', 'functions');
  const modules = (await fs.readdir(dir)).filter((f) => f.endsWith('.js')).map((f) => path.join(dir, f));
  const host = await LocalHost.create({ port: 0, appModules: modules, log: () => undefined });
  sb.start(host);
  const drain = async (run: string, count: number): Promise<number> => {
    const t0 = performance.now();
    for (let i = 0; i < count; i++) bus.send(QUEUE, { body: event(run, i), messageId: `${run}-${i}` });
    await sb.idle(600_000);
    return (performance.now() - t0) / 1000;
  };
  await drain('warm', Math.min(2000, n)); // model, Redis connections, JIT
  const elapsed = await drain('run', n);
  const results = bus.messages(TOPIC).filter((m) => m.messageId.startsWith('run-'));
  const degraded = results.filter((m) => (m.body as { cache?: string }).cache === 'degraded').length;
  await sb.stop();
  await host.dispose();
  const redis = new Redis(redisUrl);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  redis.disconnect();
  const figures: DrainFigures = {
    messages_per_s: Math.round(n / elapsed),
    messages: n,
    batch_size: batchSize,
    concurrency,
    elapsed_s: Number(elapsed.toFixed(2)),
    published: results.length,
    degraded,
  };
  process.stdout.write(`RESULT ${JSON.stringify(figures)}\n`);
  process.exit(0);
}

const median = (xs: readonly DrainFigures[]): DrainFigures =>
  [...xs].sort((a, b) => a.messages_per_s - b.messages_per_s)[Math.floor(xs.length / 2)] as DrainFigures;

/**
 * Runs the drains (alternating modes; 1 round in quick mode, else 3, medians) and adds `async` to the
 * bench output and its target (`batched_vs_single` ≥ 5) to `out.targets`.
 */
export async function addAsyncBench(
  out: { targets: TargetCheck[]; [key: string]: unknown },
  options: { quick: boolean; log: (msg: string) => void },
): Promise<void> {
  const messages = options.quick ? 5000 : 20_000;
  const runs: Record<Mode, DrainFigures[]> = { single: [], batched: [] };
  for (let round = 0; round < (options.quick ? 1 : 3); round++) {
    for (const mode of round % 2 === 0 ? (['single', 'batched'] as const) : (['batched', 'single'] as const)) {
      const f = await runJob<DrainFigures>('async', {
        BENCH_ASYNC_MODE: mode,
        BENCH_ASYNC_MESSAGES: String(messages),
      });
      if (f.published !== f.messages) throw new Error(`async ${mode}: ${f.published} of ${f.messages} published`);
      runs[mode].push(f);
      options.log(`async round ${round + 1}: ${mode} ${f.messages_per_s} messages/s (batch ${f.batch_size})`);
    }
  }
  const single = median(runs.single);
  const batched = median(runs.batched);
  const ratio = Number((batched.messages_per_s / single.messages_per_s).toPrecision(3));
  out['async'] = { single, batched, ratios: { batched_vs_single: ratio } };
  out.targets.push({
    model: 'async',
    target: 'batched messages/s vs single',
    value: ratio,
    goal: '>= 5',
    met: ratio >= 5,
  });
}

if (require.main === module) {
  drainJob().catch((err: unknown) => {
    process.stderr.write(`async bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
