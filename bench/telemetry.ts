/**
 * Telemetry overhead, run by `npm run bench`: the service with tracing off (no provider: the no-op tracer)
 * and with tracing and metrics on, exporting to discarding sinks (`servers/service-traced`), side by side in
 * alternating rounds of the same closed-loop load. `overhead_ratio` = 1 − rps(on) / rps(off); target ≤ 0.05.
 */
import { startServer, type ServerChild } from './children';
import { loadRun, medianOf, type RunFigures } from './load';

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
