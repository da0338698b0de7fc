/**
 * Telemetry overhead, run by `npm run bench`: the service with tracing off (no provider: the no-op tracer),
 * with tracing and metrics on and every trace sampled (`on`), and as deployed (`deployed`: the metrics, and
 * tracing sampled as the Azure Monitor distro samples by default, 5 traces/s), exporting to discarding sinks
 * (`servers/service-traced`), side by side in rotating rounds of the same closed-loop load.
 * `overhead_ratio` = 1 − rps(on) / rps(off), target ≤ 0.05; `deployed_overhead_ratio` the same for `deployed`.
 */
import * as path from 'node:path';
import Redis from 'ioredis';
import { startServer, type ServerChild } from './children';
import { loadRun, medianOf, type RunFigures } from './load';
import { paymentBody } from './payment-body';
import { deleteKeys } from './redis-keys';

const ARMS = ['off', 'on', 'deployed'] as const;
type Arm = (typeof ARMS)[number];

/** What {@link benchTelemetry} reports (`bench.json` → `telemetry`). */
export interface TelemetryFigures {
  readonly off: RunFigures;
  readonly on: RunFigures;
  readonly deployed: RunFigures;
  /** 1 − rps(on) / rps(off), 3 decimals; negative = within noise in favour of "on". */
  readonly overhead_ratio: number;
  /** 1 − rps(deployed) / rps(off), 3 decimals. */
  readonly deployed_overhead_ratio: number;
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

/** Runs the tracing off / on / deployed comparison. */
export async function benchTelemetry(o: TelemetryBenchOptions): Promise<TelemetryFigures> {
  const off = { ...o.env, OTEL_TRACES_EXPORTER: 'none', APPLICATIONINSIGHTS_CONNECTION_STRING: '' };
  const servers: Record<Arm, ServerChild | undefined> = { off: undefined, on: undefined, deployed: undefined };
  try {
    servers.off = await startServer('servers/service', off);
    servers.on = await startServer('servers/service-traced', { ...off, BENCH_TELEMETRY: 'on' });
    servers.deployed = await startServer('servers/service-traced', { ...off, BENCH_TELEMETRY: 'deployed' });
    const run = (name: Arm, durationSec: number): Promise<RunFigures> =>
      loadRun({
        url: (servers[name] as ServerChild).url,
        path: '/api/score',
        body: o.body,
        connections: o.connections,
        durationSec,
      });
    for (const name of ARMS) await run(name, o.warmSec);
    const runs: Record<Arm, RunFigures[]> = { off: [], on: [], deployed: [] };
    for (let r = 0; r < o.rounds; r++) {
      for (let k = 0; k < ARMS.length; k++) {
        const name = ARMS[(k + r) % ARMS.length] as Arm; // rotate the order: no arm always runs first
        const f = await run(name, o.durationSec);
        runs[name].push(f);
        o.log(`telemetry round ${r + 1}: tracing ${name} ${f.rps} req/s, p99 ${f.p99_ms} ms`);
      }
    }
    const offFig = medianOf(runs.off);
    const onFig = medianOf(runs.on);
    const deployedFig = medianOf(runs.deployed);
    const cost = (f: RunFigures): number => Math.round((1 - f.rps / Math.max(1, offFig.rps)) * 1000) / 1000;
    const ratio = cost(onFig);
    return {
      off: offFig,
      on: onFig,
      deployed: deployedFig,
      overhead_ratio: ratio,
      deployed_overhead_ratio: cost(deployedFig),
      target: { overhead_ratio_max: 0.05, met: ratio <= 0.05 },
    };
  } finally {
    await Promise.all(ARMS.map((a) => servers[a]?.stop()));
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
