/** Benchmark output: the side-by-side table, target checks, the JSON file and an SVG latency chart. */
import type { BurstSection } from './burst';
import type { RunFigures, Spread } from './load';

/** One offered rate of the tail section (bench.ts `tailSection`). */
export interface TailPoint {
  readonly offered_rps: number;
  /** Medians over the rounds, ms. */
  readonly service_p99_ms: number;
  readonly peer_p99_ms: number;
  /** Median of the per-round ratios service p99 ÷ naive Functions app p99 (target ≤ 1.5). */
  readonly ratio: number;
  readonly ratio_spread: Spread;
  /** The service's event-loop delay p99, ms (median; target ≤ 10 at 40 %). */
  readonly loop_lag_p99_ms: number;
  readonly peer_loop_lag_p99_ms: number;
  readonly service: RunFigures;
  readonly peer: RunFigures;
}

/** `<model>.tail`: the service against the naive Functions app at 40 % and 80 % of the latter's maximum. */
export interface TailFigures {
  /** The naive Functions app's closed-loop maximum (median), req/s. */
  readonly peer_max_rps: number;
  readonly at_40pct: TailPoint;
  readonly at_80pct: TailPoint;
}

/** Raw ORT figures (rows/s) as the raw child reports them. */
export interface RawFigures {
  readonly rps_batch1: number;
  readonly rps_best: number;
  readonly best_batch: number;
  readonly best_threads: number;
  /** Best rows/s with one intra-op thread (the service's one worker × one thread here), and its batch size. */
  readonly rps_best_t1?: number;
  readonly best_batch_t1?: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  readonly rule_of_8: readonly { n: number; batched_ms: number; singly_ms: number; winner: string }[];
}

/** `POST /api/score/batch` under closed-loop load (bench.ts `batchEndpointRun`). */
export interface BatchEndpointFigures {
  /** Events answered 200 per second (requests/s × events per request). */
  readonly events_per_s: number;
  readonly requests_per_s: number;
  readonly p99_ms: number;
  /** Non-2xx answers over all runs (shed batches). */
  readonly non2xx: number;
  readonly connections: number;
  /** Events per request. */
  readonly batch: number;
  /** The deadline each request declared (`x-deadline-ms`). */
  readonly deadline_ms?: number;
  readonly rounds?: number;
  readonly events_per_s_range?: readonly [number, number];
}

/** Figures of one model: every variant, the service at 80 % of its max, and the ratios. */
export interface ModelFigures {
  readonly model: { readonly file: string; readonly bytes: number; readonly source: string };
  readonly bare: RunFigures;
  readonly naive: RunFigures;
  /** The naive app as an Azure Function under the same local host: the service's fair peer. */
  readonly naive_functions: RunFigures;
  readonly raw: RawFigures;
  readonly service: RunFigures & {
    readonly mode: string;
    readonly at_80pct: RunFigures & { readonly offered_rps: number };
  };
  /** The tail at 40 % and 80 % of the naive Functions app's maximum. */
  readonly tail: TailFigures;
  /** `POST /api/score/batch` at 64 events × 8 connections. */
  readonly batch_endpoint?: BatchEndpointFigures;
  /** Bursts of 3 × 500 fresh connections on a fresh instance (bench/burst.ts). */
  readonly burst?: BurstSection;
  readonly [extra: string]: unknown;
  readonly ratios: {
    readonly service_vs_naive: number;
    readonly service_vs_bare: number;
    readonly service_vs_raw_best: number;
    /** Service req/s over the naive Functions app's req/s, same local host: the fair comparison. */
    readonly service_vs_naive_functions: number;
    /** Naive Functions app over the host-free naive server: what the Functions host layer costs. */
    readonly naive_functions_vs_naive: number;
    /** 200s per second at 1 000 closed-loop connections ÷ the service's own max at 64 (bench/overload.ts). */
    readonly overload_goodput_vs_max?: number;
    /** Batch endpoint events/s ÷ raw ORT best-batch rows/s (bench.ts `batchEndpointRun`). */
    readonly batch_endpoint_vs_raw?: number;
  };
}

/** One performance target and whether the run met it. */
export interface TargetCheck {
  readonly model: string;
  readonly target: string;
  readonly value: number;
  readonly goal: string;
  readonly met: boolean;
}

/** The ratios the issue asks for. */
export function ratios(
  bare: RunFigures,
  naive: RunFigures,
  raw: RawFigures,
  service: RunFigures,
  naiveFunctions: RunFigures,
): ModelFigures['ratios'] {
  const r = (a: number, b: number) => Number((a / b).toPrecision(3));
  return {
    service_vs_naive: r(service.rps, naive.rps),
    service_vs_bare: r(service.rps, bare.rps),
    service_vs_raw_best: r(service.rps, raw.rps_best),
    service_vs_naive_functions: r(service.rps, naiveFunctions.rps),
    naive_functions_vs_naive: r(naiveFunctions.rps, naive.rps),
  };
}

/** Checks the targets (never lowered: a miss is reported as a miss). */
export function checkTargets(figures: Record<string, ModelFigures>): TargetCheck[] {
  const out: TargetCheck[] = [];
  for (const [model, f] of Object.entries(figures)) {
    const g = f.ratios.overload_goodput_vs_max;
    if (g !== undefined)
      out.push({ model, target: 'overload goodput (1000 conns) vs max (64)', value: g, goal: '>= 0.8', met: g >= 0.8 });
  }
  const heavy = figures['heavy'];
  if (heavy !== undefined) {
    const s = heavy.service;
    const b = heavy.batch_endpoint;
    const r = heavy.ratios.batch_endpoint_vs_raw;
    if (b !== undefined && r !== undefined)
      out.push({
        model: 'heavy',
        target: `batch endpoint events/s vs raw best-batch rows/s (${b.batch} events, ${b.connections} conns, 0 non-2xx)`,
        value: r,
        goal: '>= 0.8 and non2xx 0',
        met: r >= 0.8 && b.non2xx === 0,
      });
    out.push({
      model: 'heavy',
      target: 'service req/s vs naive Functions app',
      value: heavy.ratios.service_vs_naive_functions,
      goal: '>= 3',
      met: heavy.ratios.service_vs_naive_functions >= 3,
    });
    out.push({
      model: 'heavy',
      target: 'service req/s vs raw best-batch rows/s',
      value: heavy.ratios.service_vs_raw_best,
      goal: '>= 0.70',
      met: heavy.ratios.service_vs_raw_best >= 0.7,
    });
    out.push({
      model: 'heavy',
      target: 'p99 at 80 % of service max (ms)',
      value: s.at_80pct.p99_ms,
      goal: '<= 50',
      met: s.at_80pct.p99_ms <= 50,
    });
    out.push({
      model: 'heavy',
      target: 'event-loop lag p99 at 80 % load (ms)',
      value: s.at_80pct.loop_lag_p99_ms,
      goal: '<= 10',
      met: s.at_80pct.loop_lag_p99_ms <= 10,
    });
    out.push({
      model: 'heavy',
      target: 'event-loop lag p99 at max load (ms)',
      value: s.loop_lag_p99_ms,
      goal: '<= 10',
      met: s.loop_lag_p99_ms <= 10,
    });
  }
  const small = figures['small'];
  if (small !== undefined) {
    out.push({
      model: 'small',
      target: 'service req/s vs naive Functions app',
      value: small.ratios.service_vs_naive_functions,
      goal: '>= 1.0',
      met: small.ratios.service_vs_naive_functions >= 1,
    });
    out.push({
      model: 'small',
      target: 'naive Functions app req/s vs naive server (host cost)',
      value: small.ratios.naive_functions_vs_naive,
      goal: '>= 0.5',
      met: small.ratios.naive_functions_vs_naive >= 0.5,
    });
  }
  for (const [model, f] of Object.entries(figures)) {
    for (const key of ['at_40pct', 'at_80pct'] as const) {
      const t = f.tail[key];
      out.push({
        model,
        target: `tail: service p99 ÷ naive Functions app p99 at ${key.slice(3, 5)} % of the latter's max (${t.offered_rps}/s)`,
        value: t.ratio,
        goal: '<= 1.5',
        met: t.ratio <= 1.5,
      });
    }
    out.push({
      model,
      target: `tail: service event-loop delay p99 at 40 % (ms)`,
      value: f.tail.at_40pct.loop_lag_p99_ms,
      goal: '<= 10',
      met: f.tail.at_40pct.loop_lag_p99_ms <= 10,
    });
  }
  return out;
}

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

/** The side-by-side table (one row per model × variant). */
export function table(figures: Record<string, ModelFigures>): string {
  const head = ['model', 'variant', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'loop p99', 'batch', 'non-2xx', 'rss MB'];
  const widths = [6, 22, 11, 8, 8, 8, 9, 6, 8, 7];
  const rows: string[][] = [];
  for (const [key, f] of Object.entries(figures)) {
    const http = Object.entries(f).filter(
      ([k]) =>
        k === 'bare' ||
        k === 'naive' ||
        k === 'naive_functions' ||
        (k.startsWith('service') && k !== 'service_at_40pct'),
    ) as [string, RunFigures & { at_80pct?: RunFigures & { offered_rps: number } }][];
    for (const [name, v] of http) {
      rows.push([
        key,
        name,
        String(v.rps),
        String(v.p50_ms),
        String(v.p99_ms),
        String(v.max_ms),
        String(v.loop_lag_p99_ms),
        String(v.mean_batch_size ?? '-'),
        String(v.non2xx),
        String(v.rss_mb),
      ]);
      if (v.at_80pct !== undefined) {
        const a = v.at_80pct;
        rows.push([
          key,
          `${name} @80% (${a.offered_rps}/s)`,
          String(a.rps),
          String(a.p50_ms),
          String(a.p99_ms),
          String(a.max_ms),
          String(a.loop_lag_p99_ms),
          String(a.mean_batch_size ?? '-'),
          String(a.non2xx),
          String(a.rss_mb),
        ]);
      }
    }
    for (const [at, t] of [
      ['40%', f.tail.at_40pct],
      ['80%', f.tail.at_80pct],
    ] as const) {
      for (const [who, v] of [
        ['service', t.service],
        ['naive_functions', t.peer],
      ] as const)
        rows.push([
          key,
          `${who} @${at}nf (${t.offered_rps}/s)`,
          String(v.rps),
          String(v.p50_ms),
          String(v.p99_ms),
          String(v.max_ms),
          String(v.loop_lag_p99_ms),
          String(v.mean_batch_size ?? '-'),
          String(v.non2xx),
          String(v.rss_mb),
        ]);
    }
    const r = f.raw;
    rows.push([
      key,
      'raw batch 1 (rows/s)',
      String(r.rps_batch1),
      String(r.p50_ms),
      String(r.p99_ms),
      String(r.max_ms),
      '-',
      '1',
      '-',
      '-',
    ]);
    rows.push([
      key,
      `raw batch ${r.best_batch} t${r.best_threads} (rows/s)`,
      String(r.rps_best),
      '-',
      '-',
      '-',
      '-',
      String(r.best_batch),
      '-',
      '-',
    ]);
  }
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i] ?? 8, i >= 2)).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** A small SVG chart: p50 and p99 latency per HTTP variant, one panel per model. */
export function latencySvg(figures: Record<string, ModelFigures>): string {
  const bars: { label: string; p50: number; p99: number }[] = [];
  for (const [key, f] of Object.entries(figures)) {
    bars.push({
      label: `${key} service @40% nf`,
      p50: f.tail.at_40pct.service.p50_ms,
      p99: f.tail.at_40pct.service_p99_ms,
    });
    bars.push({
      label: `${key} naive_functions @40% nf`,
      p50: f.tail.at_40pct.peer.p50_ms,
      p99: f.tail.at_40pct.peer_p99_ms,
    });
    for (const [name, v] of Object.entries(f)) {
      if (!(name === 'bare' || name === 'naive' || name === 'naive_functions' || name.startsWith('service'))) continue;
      const run = v as RunFigures & { at_80pct?: RunFigures };
      bars.push({ label: `${key} ${name} (max)`, p50: run.p50_ms, p99: run.p99_ms });
      if (run.at_80pct !== undefined)
        bars.push({ label: `${key} ${name} @80%`, p50: run.at_80pct.p50_ms, p99: run.at_80pct.p99_ms });
    }
  }
  const max = Math.max(1, ...bars.map((b) => b.p99));
  const W = 760;
  const left = 230;
  const rowH = 26;
  const scale = (v: number) => Math.max(1, ((W - left - 60) * v) / max);
  const body = bars
    .map((b, i) => {
      const y = 40 + i * rowH;
      return [
        `<text x="${left - 8}" y="${y + 14}" text-anchor="end" font-size="12">${b.label}</text>`,
        `<rect x="${left}" y="${y}" width="${scale(b.p99).toFixed(1)}" height="9" fill="#d9534f"/>`,
        `<rect x="${left}" y="${y + 10}" width="${scale(b.p50).toFixed(1)}" height="9" fill="#337ab7"/>`,
        `<text x="${left + scale(b.p99) + 4}" y="${y + 9}" font-size="10">${b.p99} ms</text>`,
        `<text x="${left + scale(b.p50) + 4}" y="${y + 19}" font-size="10">${b.p50} ms</text>`,
      ].join('');
    })
    .join('\n');
  const h = 60 + bars.length * rowH;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" font-family="sans-serif">
<text x="10" y="20" font-size="14">Latency per variant (red: p99, blue: p50), ms</text>
${body}
</svg>
`;
}
