/** One HTTP load run with autocannon, plus the server's own event-loop figures for that run. */
import autocannon from 'autocannon';
import { openLoop } from '../test/support/load/open-loop';

/** What one run measured. Latencies in ms; `rps` counts 2xx answers only. */
export interface RunFigures {
  readonly rps: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  readonly loop_lag_p99_ms: number;
  readonly rss_mb: number;
  readonly non2xx: number;
  readonly errors: number;
  /** Mean `timing.batchSize` over answers that carry one (the service), request-weighted. */
  readonly mean_batch_size?: number;
  /** Over several rounds ({@link medianOf}): how many, and the range of req/s and of p99 across them. */
  readonly rounds?: number;
  readonly rps_range?: readonly [number, number];
  readonly p99_range_ms?: readonly [number, number];
}

/** The median of a set of figures, with its range: what the bench reports for a figure measured over rounds. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** The per-round values, in round order. */
  readonly rounds: readonly number[];
}

/** Lower median (a measured value, never an average of two), min and max of `values`; NaN on none. */
export function spreadOf(values: readonly number[], digits = 3): Spread {
  const s = [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const r = (v: number | undefined) => (v === undefined ? Number.NaN : Number(v.toPrecision(digits)));
  return {
    median: r(s[Math.floor((s.length - 1) / 2)]),
    min: r(s[0]),
    max: r(s.at(-1)),
    rounds: values.map((v) => r(v)),
  };
}

/** Options of {@link loadRun}. */
export interface LoadOptions {
  readonly url: string;
  readonly path: string;
  /** Body of each request (called once per request). */
  readonly body: () => string;
  readonly connections: number;
  readonly durationSec: number;
  /** Fixed offered rate, req/s, sent open-loop (`connections` is then unused); default: closed loop. */
  readonly rate?: number;
  /** Extra request headers (closed loop only), e.g. `x-deadline-ms`. */
  readonly headers?: Readonly<Record<string, string>>;
}

async function serverStats(url: string, reset: boolean): Promise<{ loop_lag_p99_ms: number; rss_mb: number }> {
  const res = await fetch(`${url}/__bench/stats${reset ? '?reset=1' : ''}`);
  return (await res.json()) as { loop_lag_p99_ms: number; rss_mb: number };
}

/**
 * Runs the load against `url + path`: autocannon's closed loop, or, with `rate`, the open-loop
 * constant-rate generator (`./open-loop`: autocannon's rate mode sends bursts, see there). Resets and then
 * reads the server's lag figures around the run.
 */
export async function loadRun(o: LoadOptions): Promise<RunFigures> {
  await serverStats(o.url, true);
  if (o.rate !== undefined) {
    const f = await openLoop({ url: o.url, path: o.path, body: o.body, rate: o.rate, durationSec: o.durationSec });
    const server = await serverStats(o.url, true);
    return {
      rps: f.rps,
      p50_ms: f.p50_ms,
      p99_ms: f.p99_ms,
      max_ms: f.max_ms,
      loop_lag_p99_ms: server.loop_lag_p99_ms,
      rss_mb: server.rss_mb,
      non2xx: f.non2xx,
      errors: f.errors,
    };
  }
  let batchSum = 0;
  let batchCount = 0;
  const result = await autocannon({
    url: o.url,
    connections: o.connections,
    duration: o.durationSec,
    timeout: 30,
    ...(o.rate === undefined ? {} : { overallRate: o.rate }),
    requests: [
      {
        method: 'POST',
        path: o.path,
        headers: { 'content-type': 'application/json', ...o.headers },
        setupRequest: (req) => ({ ...req, body: o.body() }),
        onResponse: (_status, body) => {
          const m = /"batchSize":(\d+)/.exec(body);
          if (m !== null) {
            batchSum += Number(m[1]);
            batchCount++;
          }
        },
      },
    ],
  });
  const server = await serverStats(o.url, true);
  const r1 = (v: number) => Math.round(v * 10) / 10;
  return {
    rps: Math.round(result['2xx'] / result.duration),
    p50_ms: r1(result.latency.p50),
    p99_ms: r1(result.latency.p99),
    max_ms: r1(result.latency.max),
    loop_lag_p99_ms: server.loop_lag_p99_ms,
    rss_mb: server.rss_mb,
    non2xx: result.non2xx,
    errors: result.errors, // autocannon counts each timeout as an error too
    ...(batchCount > 0 ? { mean_batch_size: Math.round((batchSum / batchCount) * 100) / 100 } : {}),
  };
}

/** Median of each figure over several runs (alternating rounds damp a noisy machine). */
export function medianOf(runs: readonly RunFigures[]): RunFigures {
  const med = (f: (r: RunFigures) => number | undefined): number => {
    const v = runs
      .map(f)
      .filter((x): x is number => x !== undefined)
      .sort((a, b) => a - b);
    return v.length === 0 ? Number.NaN : (v[Math.floor((v.length - 1) / 2)] as number);
  };
  const batch = med((r) => r.mean_batch_size);
  const range = (f: (r: RunFigures) => number): readonly [number, number] => [
    Math.min(...runs.map(f)),
    Math.max(...runs.map(f)),
  ];
  return {
    rps: med((r) => r.rps),
    p50_ms: med((r) => r.p50_ms),
    p99_ms: med((r) => r.p99_ms),
    max_ms: Math.max(...runs.map((r) => r.max_ms)),
    loop_lag_p99_ms: med((r) => r.loop_lag_p99_ms),
    rss_mb: Math.max(...runs.map((r) => r.rss_mb)),
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    ...(Number.isNaN(batch) ? {} : { mean_batch_size: batch }),
    rounds: runs.length,
    rps_range: range((r) => r.rps),
    p99_range_ms: range((r) => r.p99_ms),
  };
}
