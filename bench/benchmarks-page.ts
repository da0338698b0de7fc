/**
 * docs/benchmarks.md, generated from the committed bench/results/*.json (`npm run bench:report`): for each result
 * file the machine, Node version and date it records, then every target of bench/targets.ts with the measured
 * figure and whether it was met, then the side-by-side figures. A file that is not there reads "not measured".
 */
import { meets, TARGETS, valueAt, type Target } from './targets';

/** The parsed result files by name (e.g. `bench.json`); a missing file is simply absent. */
export type Results = Readonly<Record<string, unknown>>;

/** What each result file measures, and the command that writes it. */
const FILES: readonly (readonly [file: string, command: string, what: string])[] = [
  [
    'cpu.json',
    'npm run bench:cpu',
    'CPU per decision from /proc: service ÷ naive Functions app, marginal cost of each feature',
  ],
  [
    'cpu-before-after.json',
    'npm run bench:cpu',
    'CPU per decision of this service ÷ an earlier checkout of it (`BENCH_BASELINE_APP`), same rounds',
  ],
  [
    'signals.json',
    'npm run bench:signals',
    'CPU and Redis work (commands, server CPU, socket reads) per decision with 12 aggregates over 5 keys',
  ],
  [
    'capacity.json',
    'npm run bench:capacity',
    'capacity per model, refusals below capacity, the rate that holds a 50 ms p99',
  ],
  ['bench.json', 'npm run bench', 'throughput and latency side by side, overload, refusal, Service Bus, telemetry'],
  ['start.json', 'npm run bench:start', 'time from `npm start` to ready'],
  ['swap.json', 'npm run bench:swap', 'model swaps under load: failures, latency, memory'],
  ['cache.json', 'npm run bench:cache', 'user-context cache: latency, compression, hit ratio, throughput'],
  ['escalation.json', 'npm run bench:escalation', 'latency with LLM escalation off, healthy and failing'],
  ['telemetry-decompose.json', 'npm run bench:telemetry', 'main-thread CPU per request of each telemetry part'],
  [
    'decisioning.json',
    'npm run bench:decisioning',
    'rules: one evaluation, p99 with and without rules, list propagation',
  ],
  [
    'cases.json',
    'npm run bench:cases',
    'the case queue: 200 concurrent `next` over 1,000 open cases, distinct and twice',
  ],
  ['tail.json', 'npm run bench:tail', "where the service's tail at light load goes: loop use, CPU per request, stalls"],
];

const NOT_MEASURED = 'not measured';
const cell = (v: unknown): string =>
  v === undefined || v === null ? '–' : String(v).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};

/** Machine, Node version and date a result file records (the bench writes them under `machine` or at the top). */
function provenance(doc: unknown): { machine: string; node: string; date: string } {
  const m = obj(obj(doc)['machine']);
  const top = obj(doc);
  const parts = [
    m['cpu'],
    m['cores'] === undefined ? undefined : `${String(m['cores'])} cores`,
    m['cpus'] === undefined ? undefined : `${String(m['cpus'])} CPUs`,
    m['memory_gb'] === undefined ? undefined : `${String(m['memory_gb'])} GB`,
    m['platform'],
    m['onnxruntime'] === undefined ? undefined : `onnxruntime-node ${String(m['onnxruntime'])}`,
  ].filter((p) => p !== undefined);
  return {
    machine: parts.length === 0 ? 'not recorded' : parts.join(', '),
    node: String(m['node'] ?? top['node'] ?? 'not recorded'),
    date: String(m['date'] ?? top['date'] ?? 'not recorded'),
  };
}

function goalText(t: Target): string {
  const sign = t.comparison === '>=' ? '≥' : t.comparison === '<=' ? '≤' : '=';
  return `${sign} ${String(t.goal)}`;
}

/**
 * The per-round values of a figure measured over rounds, when its file records them beside it: `<path>_spread`
 * (tail ratios) or `<path>_rounds` (paired p99 comparisons), each `{ median, min, max, rounds }`.
 */
function roundsOf(doc: unknown, path: string): { min: number; max: number } | undefined {
  for (const suffix of ['_spread', '_rounds']) {
    const v = obj(valueAt(doc, `${path}${suffix}`));
    if (typeof v['min'] === 'number' && typeof v['max'] === 'number') return { min: v['min'], max: v['max'] };
  }
  return undefined;
}

function targetRow(t: Target, results: Results): string {
  const doc = results[t.file];
  if (doc === undefined)
    return `| ${t.label} | \`${t.file}\` \`${t.path}\` | ${goalText(t)} | ${NOT_MEASURED} | ${NOT_MEASURED} |`;
  const value = valueAt(doc, t.path);
  const met = meets(t, value);
  const rounds = roundsOf(doc, t.path);
  // the median meets the goal or not, but some rounds fall on the other side of it
  const straddles = rounds !== undefined && met !== undefined && meets(t, rounds.min) !== meets(t, rounds.max);
  const verdict =
    (met === undefined ? 'no figure' : met ? 'met' : '**missed**') + (straddles ? ' (rounds on both sides)' : '');
  const measured =
    cell(value ?? 'absent') + (rounds === undefined ? '' : ` (rounds ${cell(rounds.min)}–${cell(rounds.max)})`);
  return `| ${t.label} | \`${t.file}\` \`${t.path}\` | ${goalText(t)} | ${measured} | ${verdict} |`;
}

function sideBySide(doc: unknown): string[] {
  const rows: string[] = [];
  for (const [model, f] of Object.entries(obj(doc))) {
    for (const [variant, run] of Object.entries(obj(f))) {
      const r = obj(run);
      if (typeof r['rps'] !== 'number' || r['p99_ms'] === undefined) continue;
      rows.push(
        `| ${model} | ${variant} | ${cell(r['rps'])} | ${cell(r['p50_ms'])} | ${cell(r['p99_ms'])} | ${cell(r['loop_lag_p99_ms'])} | ${cell(r['non2xx'])} |`,
      );
    }
  }
  if (rows.length === 0) return [];
  return [
    '| model | variant | req/s | p50 ms | p99 ms | event-loop lag p99 ms | non-2xx |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows,
  ];
}

function signalsRows(doc: unknown): string[] {
  const median = (v: unknown): unknown => obj(v)['median'];
  const rows = Object.entries(obj(obj(doc)['per_decision'])).map(([arm, a]) => {
    const f = obj(a);
    return `| ${arm} | ${cell(median(f['main_us']))} | ${cell(median(f['process_us']))} | ${cell(median(f['redis_commands']))} | ${cell(median(f['redis_usec']))} | ${cell(median(f['redis_reads']))} |`;
  });
  if (rows.length === 0) return [];
  return [
    '| arm | app thread µs | process µs | Redis commands | Redis CPU µs | Redis socket reads |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    "Per answered decision, medians over rounds. Redis figures are the server's (`INFO commandstats`, `INFO stats`",
    '`total_reads_processed`) over each run, divided by its answers.',
  ];
}

function escalationRows(doc: unknown): string[] {
  const rows: string[] = [];
  for (const phase of ['baseline', 'healthy', 'failing']) {
    const p = obj(obj(doc)[phase]);
    const n = obj(p['not_escalated']);
    if (n['count'] !== undefined)
      rows.push(`| ${phase} | not escalated | ${cell(n['count'])} | ${cell(n['p50_ms'])} | ${cell(n['p99_ms'])} |`);
    for (const [outcome, e] of Object.entries(obj(p['escalated'])))
      rows.push(
        `| ${phase} | escalated: ${outcome} | ${cell(obj(e)['count'])} | ${cell(obj(e)['p50_ms'])} | ${cell(obj(e)['p99_ms'])} |`,
      );
  }
  if (rows.length === 0) return [];
  return ['| phase | requests | count | p50 ms | p99 ms |', '|---|---|---:|---:|---:|', ...rows];
}

function telemetryRows(doc: unknown): string[] {
  const rows = Object.entries(obj(obj(doc)['arms'])).map(([arm, a]) => {
    const f = obj(a);
    return `| ${arm} | ${cell(f['main_cpu_us_per_req'])} | ${cell(f['vs_off_us'])} | ${cell(f['vs_off_ratio'])} |`;
  });
  if (rows.length === 0) return [];
  return [
    '| arm | main-thread CPU per request, µs | excess over `off`, µs (median) | excess ÷ `off` |',
    '|---|---:|---:|---:|',
    ...rows,
  ];
}

/** A section of figures from one file, or "not measured". */
function figures(title: string, file: string, results: Results, rows: (doc: unknown) => string[]): string[] {
  const doc = results[file];
  const body = doc === undefined ? [`${NOT_MEASURED} (\`bench/results/${file}\` is not committed).`] : rows(doc);
  return [`### ${title}`, '', ...(body.length === 0 ? ['No such figures in the file.'] : body), ''];
}

/** The whole page. `methods` is the static text on how the figures are made (bench/benchmarks-methods.ts). */
export function benchmarksPage(results: Results, methods: string): string {
  const runs = FILES.map(([file, command, what]) => {
    const doc = results[file];
    if (doc === undefined) return `| \`${file}\` | \`${command}\` | ${what} | ${NOT_MEASURED} | | |`;
    const p = provenance(doc);
    return `| \`${file}\` | \`${command}\` | ${what} | ${cell(p.date)} | ${cell(p.machine)} | ${cell(p.node)} |`;
  });
  return [
    '# Benchmarks',
    '',
    '<!-- Generated by `npm run bench:report` from bench/results/*.json and bench/targets.ts. Do not edit. -->',
    '',
    'Every figure on this page comes from a committed result file in `bench/results/`, written by the command',
    'named next to it; targets are in `bench/targets.ts`. A file that is not committed reads "not measured".',
    'The machines these run on have 2 shared cores, so single figures are noisy: compare the variants of one run',
    '(ratios), not runs with each other.',
    '',
    '## Runs',
    '',
    '| file | command | what it measures | date | machine | Node |',
    '|---|---|---|---|---|---|',
    ...runs,
    '',
    '## Targets',
    '',
    '| figure | where | target | measured | result |',
    '|---|---|---|---|---|',
    ...TARGETS.map((t) => targetRow(t, results)),
    '',
    '## Figures',
    '',
    ...figures('Side by side (`bench.json`)', 'bench.json', results, sideBySide),
    ...figures('Signals: CPU and Redis work per decision (`signals.json`)', 'signals.json', results, signalsRows),
    ...figures('LLM escalation (`escalation.json`)', 'escalation.json', results, escalationRows),
    ...figures('Telemetry by part (`telemetry-decompose.json`)', 'telemetry-decompose.json', results, telemetryRows),
    methods.trimEnd(),
    '',
  ].join('\n');
}
