/**
 * Telemetry overhead, run by `npm run bench`: the service with tracing off (no provider: the no-op tracer),
 * with tracing and metrics on and every trace sampled (`on`), and as deployed (`deployed`: the metrics, and
 * tracing sampled as the Azure Monitor distro samples by default, 5 traces/s), exporting to discarding sinks
 * (`servers/service-traced`), side by side in rotating rounds of the same closed-loop load.
 * `overhead_ratio` = 1 − rps(on) / rps(off), target ≤ 0.05; `deployed_overhead_ratio` the same for `deployed`;
 * each the median of the per-round ratios. With a {@link Runtime} the servers run under another Node
 * (`npm run bench` with `BENCH_NODE` / `BENCH_NODE_APP`).
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import Redis from 'ioredis';
import { startServer, type Runtime, type ServerChild } from './children';
import { loadRun, medianOf, spreadOf, type RunFigures, type Spread } from './load';
import { paymentBody } from '../test/support/load/payment-body';
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
  /** 1 − rps(deployed) / rps(off), 3 decimals: the median of the per-round ratios (each arm against off in the same round). */
  readonly deployed_overhead_ratio: number;
  /** Per-round ratios and their range. */
  readonly spread: { readonly overhead_ratio: Spread; readonly deployed_overhead_ratio: Spread };
  /** The Node version the servers ran under. */
  readonly node: string;
  readonly target: { readonly overhead_ratio_max: number; readonly met: boolean };
  /** The same comparison under the second Node (`BENCH_NODE`), when set (bench.ts). */
  readonly second_node?: TelemetryFigures;
  /** `deployed_overhead_ratio` per Node version, side by side (bench.ts, with a second Node). */
  readonly deployed_overhead_ratio_by_node?: Readonly<Record<string, number>>;
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
  /** Run the servers under another Node and its copy of the app (default: this Node, this checkout). */
  readonly runtime?: Runtime;
}

/** Runs the tracing off / on / deployed comparison. */
export async function benchTelemetry(o: TelemetryBenchOptions): Promise<TelemetryFigures> {
  const off = { ...o.env, OTEL_TRACES_EXPORTER: 'none', APPLICATIONINSIGHTS_CONNECTION_STRING: '' };
  const servers: Record<Arm, ServerChild | undefined> = { off: undefined, on: undefined, deployed: undefined };
  try {
    const start = (name: string, env: Record<string, string>) => startServer(name, env, 120_000, o.runtime);
    servers.off = await start('servers/service', off);
    servers.on = await start('servers/service-traced', { ...off, BENCH_TELEMETRY: 'on' });
    servers.deployed = await start('servers/service-traced', { ...off, BENCH_TELEMETRY: 'deployed' });
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
    // paired by round: each arm against off in the same round, then the median of those ratios
    const paired = (arm: Arm): Spread =>
      spreadOf(runs[arm].map((f, r) => 1 - f.rps / Math.max(1, runs.off[r]?.rps ?? Number.NaN)));
    const spread = { overhead_ratio: paired('on'), deployed_overhead_ratio: paired('deployed') };
    const ratio = Math.round(spread.overhead_ratio.median * 1000) / 1000;
    const node =
      o.runtime === undefined
        ? process.version
        : spawnSync(o.runtime.node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    return {
      node,
      off: offFig,
      on: onFig,
      deployed: deployedFig,
      overhead_ratio: ratio,
      deployed_overhead_ratio: Math.round(spread.deployed_overhead_ratio.median * 1000) / 1000,
      spread,
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
