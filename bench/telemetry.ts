/**
 * Telemetry overhead, run by `npm run bench`: the service with tracing off (no provider: the no-op tracer)
 * and with tracing and metrics on, exporting to discarding sinks (`servers/service-traced`), side by side in
 * alternating rounds of the same closed-loop load. `overhead_ratio` = 1 − rps(on) / rps(off); target ≤ 0.05.
 */
import * as path from 'node:path';
import Redis from 'ioredis';
import { startServer, type ServerChild } from './children';
import { loadRun, medianOf, type RunFigures } from './load';
import { paymentBody } from './payment-body';
import { deleteKeys } from './redis-keys';

/** What {@link benchTelemetry} reports (`bench.json` → `telemetry`). */
export interface TelemetryFigures {
  readonly off: RunFigures;
  readonly on: RunFigures;
  /** 1 − rps(on) / rps(off), 3 decimals; negative = within noise in favour of "on". */
  readonly overhead_ratio: number;
  readonly target: { readonly overhead_ratio_max: number; readonly met: boolean };
}

/** Options of {@link benchTelemetry}. */
export interface TelemetryBenchOptions {
  /** The service's settings (model folder, Redis, ...). */
  readonly env: Record<string, string>;
  readonly rounds: number;
  readonly durationSec: number;
  readonly warmSec: number;
  readonly connections: number;
  readonly body: () => string;
  readonly log: (msg: string) => void;
}

/** Runs the tracing off/on comparison. */
export async function benchTelemetry(o: TelemetryBenchOptions): Promise<TelemetryFigures> {
  const off = { ...o.env, OTEL_TRACES_EXPORTER: 'none', APPLICATIONINSIGHTS_CONNECTION_STRING: '' };
  const servers: Record<'off' | 'on', ServerChild | undefined> = { off: undefined, on: undefined };
  try {
    servers.off = await startServer('servers/service', off);
    servers.on = await startServer('servers/service-traced', off);
    const run = (name: 'off' | 'on', durationSec: number): Promise<RunFigures> =>
      loadRun({
        url: (servers[name] as ServerChild).url,
        path: '/api/score',
        body: o.body,
        connections: o.connections,
        durationSec,
      });
    await run('off', o.warmSec);
    await run('on', o.warmSec);
    const runs: Record<'off' | 'on', RunFigures[]> = { off: [], on: [] };
    for (let r = 0; r < o.rounds; r++) {
      for (const name of r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        const f = await run(name, o.durationSec);
        runs[name].push(f);
        o.log(`telemetry round ${r + 1}: tracing ${name} ${f.rps} req/s, p99 ${f.p99_ms} ms`);
      }
    }
    const offFig = medianOf(runs.off);
    const onFig = medianOf(runs.on);
    const ratio = Math.round((1 - onFig.rps / Math.max(1, offFig.rps)) * 1000) / 1000;
    return { off: offFig, on: onFig, overhead_ratio: ratio, target: { overhead_ratio_max: 0.05, met: ratio <= 0.05 } };
  } finally {
    await Promise.all([servers.off?.stop(), servers.on?.stop()]);
  }
}

/**
 * Standalone: `node dist/bench/telemetry.js [--quick] [--rounds N]` runs only this comparison against the bundled
 * model and `BENCH_REDIS_URL` (default `redis://127.0.0.1:6379`) and prints the figures as JSON. Quick: 1 round
 * of 3 s (1 s warm-up); else 3 rounds of 10 s (2 s warm-up), as `npm run bench`. 32 connections.
 */
async function main(): Promise<void> {
  const argv = process.argv;
  const quick = argv.includes('--quick');
  const at = argv.indexOf('--rounds');
  const rounds = at >= 0 ? Number(argv[at + 1]) : quick ? 1 : 3;
  const root = path.resolve(__dirname, '..', '..');
  const log = (msg: string): void => void process.stderr.write(`[telemetry] ${msg}\n`);
  const redisUrl = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  try {
    const figures = await benchTelemetry({
      env: {
        MODEL_DIR: path.join(root, 'models'),
        MODEL_NAME: 'fraud',
        LOG_LEVEL: 'error',
        REDIS_URL: redisUrl,
        REDIS_KEY_PREFIX: 'bench:tel:',
      },
      rounds,
      durationSec: quick ? 3 : 10,
      warmSec: quick ? 1 : 2,
      connections: 32,
      body: paymentBody,
      log,
    });
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    const redis = new Redis(redisUrl);
    await deleteKeys(redis, 'bench:tel:*');
    redis.disconnect();
  }
}

if (require.main === module) void main();
