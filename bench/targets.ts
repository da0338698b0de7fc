/**
 * The performance targets, keyed by the bench result file and the JSON path of the figure they judge.
 * `npm run bench:report` (bench/benchmarks-page.ts) reads bench/results/*.json and writes docs/benchmarks.md
 * with each figure, its target and whether the committed run met it. Targets are never lowered here to make
 * a run pass: a miss is reported as a miss.
 */

/** How a figure is compared with its goal. */
export type Comparison = '>=' | '<=' | '==';

/** One target: a figure in a result file and the value it must reach. */
export interface Target {
  /** Result file under bench/results/. */
  readonly file: string;
  /** Dot path of the figure in that file (array indices as numbers). */
  readonly path: string;
  readonly comparison: Comparison;
  readonly goal: number | boolean;
  /** What the figure is, in words. */
  readonly label: string;
  /** The command that writes the file. */
  readonly command: string;
}

const bench = (path: string, comparison: Comparison, goal: number, label: string): Target => ({
  file: 'bench.json',
  path,
  comparison,
  goal,
  label,
  command: 'npm run bench',
});

const cases = (path: string, comparison: Comparison, goal: number, label: string): Target => ({
  file: 'cases.json',
  path: `cases.${path}`,
  comparison,
  goal,
  label,
  command: 'npm run bench:cases',
});

const cpu = (path: string, comparison: Comparison, goal: number, label: string): Target => ({
  file: 'cpu.json',
  path: `cpu.${path}`,
  comparison,
  goal,
  label,
  command: 'npm run bench:cpu',
});

/** A figure of the before/after CPU run (`cpu-before-after.json`): does not rise, ≤ 1. */
const beforeAfter = (path: string, label: string): Target => ({
  file: 'cpu-before-after.json',
  path: `cpu.before_after.${path}`,
  comparison: '<=',
  goal: 1,
  label,
  command: 'npm run bench:cpu',
});

const capacity = (path: string, comparison: Comparison, goal: number, label: string): Target => ({
  file: 'capacity.json',
  path,
  comparison,
  goal,
  label,
  command: 'npm run bench:capacity',
});

const signals = (path: string, comparison: Comparison, goal: number, label: string): Target => ({
  file: 'signals.json',
  path,
  comparison,
  goal,
  label,
  command: 'npm run bench:signals',
});

export const TARGETS: readonly Target[] = [
  signals(
    'ratios.signals_12_vs_baseline_main.median',
    '<=',
    1,
    'app-thread CPU per decision with the shipped signals + 12 aggregates over 5 keys ÷ the service before signals (17 features), same load (docs/signals.md)',
  ),
  signals(
    'ratios.signals_12_vs_baseline_process.median',
    '<=',
    1,
    'whole-process CPU per decision, 12 aggregates over 5 keys ÷ the service before signals',
  ),
  signals(
    'ratios.signals_12_vs_naive_main.median',
    '<=',
    1.15,
    'app-thread CPU per decision with 12 aggregates over 5 keys ÷ the naive Functions app, same load',
  ),
  signals(
    'ratios.signals_12_vs_naive_process.median',
    '<=',
    1.1,
    'whole-process CPU per decision with 12 aggregates over 5 keys ÷ the naive Functions app',
  ),
  signals(
    'capacity.embedded_signals_12_vs_naive.median',
    '>=',
    0.9,
    'answers per second at 256 closed-loop connections on embedded defaults with 12 aggregates ÷ the naive Functions app',
  ),
  cpu(
    'per_decision.main_ratio',
    '<=',
    1.15,
    'app-thread CPU per answered request, service ÷ naive Functions app at 400 req/s (median of paired rounds)',
  ),
  cpu(
    'per_decision.process_ratio',
    '<=',
    1.1,
    'whole-process CPU per answered request, service ÷ naive Functions app at 400 req/s',
  ),
  beforeAfter(
    'main_ratio_vs_baseline.median',
    'app-thread CPU per decision, this service ÷ the same service before the subsystem registry and platform floor (same rounds)',
  ),
  beforeAfter(
    'process_ratio_vs_baseline.median',
    'whole-process CPU per decision, this service ÷ the same service before the subsystem registry and platform floor',
  ),
  cpu('marginal.rules', '<=', 0.08, 'CPU per decision that the ruleset and lists add (app thread, on ÷ off − 1)'),
  cpu('marginal.decision_log', '<=', 0.03, 'CPU per decision that the decision log adds (app thread, on ÷ off − 1)'),
  cpu(
    'marginal.telemetry_deployed',
    '<=',
    0.05,
    "CPU per decision that telemetry as deployed adds (the distro's sampling; app thread, on ÷ off − 1)",
  ),
  cpu(
    'marginal.telemetry_deployed_second_node',
    '<=',
    0.05,
    'the same on the second Node (BENCH_NODE: Node 22 beside Node 24)',
  ),
  cpu(
    'marginal.cases',
    '<=',
    0.03,
    'CPU per decision that writing cases adds, with 10 % of payments sent to review (app thread, on ÷ off − 1)',
  ),
  cases(
    'next.distinct_min',
    '>=',
    200,
    'distinct cases handed out to 200 concurrent POST /api/cases/next over 1,000 open cases (worst round)',
  ),
  cases('next.handed_out_twice_max', '==', 0, 'cases handed out twice in those rounds'),
  cpu(
    'refusals_at_fixed_rate',
    '==',
    0,
    "answers other than 200 from the service arms at 400 req/s (about 20 % of the naive app's maximum)",
  ),
  capacity(
    'small.refusals_below_capacity',
    '==',
    0,
    "small model: refusals at 20 % and 50 % of the naive app's maximum",
  ),
  capacity(
    'heavy.refusals_below_capacity',
    '==',
    0,
    "heavy model: refusals at 20 % and 50 % of the naive app's maximum",
  ),
  capacity(
    'small.ratios.capacity_vs_naive_functions',
    '>=',
    0.9,
    'small model: goodput at 64 connections, service ÷ naive Functions app',
  ),
  capacity(
    'heavy.ratios.capacity_vs_naive_functions',
    '>=',
    3,
    'heavy model: goodput at 64 connections, service ÷ naive Functions app',
  ),
  bench('small.burst.default.ok', '==', 1500, 'small model: bursts of 3 × 500 at the default deadline answered 200'),
  bench('small.ratios.service_vs_naive_functions', '>=', 1, 'small model: service req/s ÷ naive Functions app req/s'),
  bench('heavy.ratios.service_vs_naive_functions', '>=', 3, 'heavy model: service req/s ÷ naive Functions app req/s'),
  bench(
    'small.tail.at_40pct.loop_lag_p99_ms',
    '<=',
    10,
    "small model: event-loop delay p99 at 40 % of the naive Functions app's maximum, ms",
  ),
  bench(
    'small.burst.deadline_2000.ok',
    '==',
    1500,
    'small model: bursts of 3 × 500 with x-deadline-ms 2000 answered 200',
  ),
  bench(
    'small.burst.late_200s.share_of_200s',
    '<=',
    0.01,
    'small model: 200s sent after their own deadline ÷ 200s, in the bursts',
  ),
  bench(
    'heavy.tail.at_40pct.loop_lag_p99_ms',
    '<=',
    10,
    "heavy model: event-loop delay p99 at 40 % of the naive Functions app's maximum, ms",
  ),
  bench(
    'heavy.burst.deadline_2000.ok',
    '==',
    1500,
    'heavy model: bursts of 3 × 500 with x-deadline-ms 2000 answered 200',
  ),
  bench(
    'heavy.burst.late_200s.share_of_200s',
    '<=',
    0.01,
    'heavy model: 200s sent after their own deadline ÷ 200s, in the bursts',
  ),
  bench(
    'heavy.ratios.batch_endpoint_vs_raw',
    '>=',
    0.8,
    'heavy model: batch endpoint events/s ÷ raw ONNX Runtime best-batch rows/s',
  ),
  bench('heavy.batch_endpoint.non2xx', '==', 0, 'heavy model: batch endpoint answers other than 2xx'),
  bench('small.ratios.overload_goodput_vs_max', '>=', 0.8, 'small model: goodput at 1 000 connections ÷ maximum'),
  bench('heavy.ratios.overload_goodput_vs_max', '>=', 0.8, 'heavy model: goodput at 1 000 connections ÷ maximum'),
  bench('heavy.ratios.service_vs_raw_best', '>=', 0.7, 'heavy model: service req/s ÷ raw best-batch rows/s'),
  bench('heavy.service.at_80pct.p99_ms', '<=', 50, 'heavy model: p99 at 80 % of the service maximum, ms'),
  bench('heavy.service.at_80pct.loop_lag_p99_ms', '<=', 10, 'heavy model: event-loop lag p99 at 80 % load, ms'),
  bench('heavy.service.loop_lag_p99_ms', '<=', 10, 'heavy model: event-loop lag p99 at maximum load, ms'),
  bench('async.ratios.batched_vs_single', '>=', 5, 'Service Bus: messages/s in batches of 256 ÷ one per call'),
  bench('telemetry.overhead_ratio', '<=', 0.05, 'telemetry: 1 − req/s with tracing on ÷ off (all traces sampled)'),
  bench(
    'telemetry.deployed_overhead_ratio',
    '<=',
    0.05,
    "telemetry as deployed (the distro's sampling), on the machine's Node: 1 − req/s ÷ tracing off",
  ),
  bench(
    'telemetry.second_node.deployed_overhead_ratio',
    '<=',
    0.05,
    'telemetry as deployed on the second Node (24, BENCH_NODE): 1 − req/s ÷ tracing off',
  ),
  {
    file: 'decisioning.json',
    path: 'decisioning.rules_eval_p99_us',
    comparison: '<=',
    goal: 50,
    label: 'rules: one evaluation of 50 compiled CEL rules, p99, µs',
    command: 'npm run bench:decisioning',
  },
  {
    file: 'start.json',
    path: 'warm.ready_ms.median',
    comparison: '<=',
    goal: 2000,
    label: '`npm start` on a built checkout until `/api/health/ready` answers 200, median ms',
    command: 'npm run bench:start',
  },
  {
    file: 'swap.json',
    path: 'requests.failed',
    comparison: '==',
    goal: 0,
    label: 'failed requests across 50 model swaps under load',
    command: 'npm run bench:swap',
  },
  {
    file: 'swap.json',
    path: 'latency_ms.ratio',
    comparison: '<=',
    goal: 2,
    label: 'p99 in swap windows ÷ steady p99',
    command: 'npm run bench:swap',
  },
  {
    file: 'swap.json',
    path: 'targets.rss_growth_within_2x_model',
    comparison: '==',
    goal: true,
    label: 'RSS growth from swap 5 to swap 50 within twice the model size',
    command: 'npm run bench:swap',
  },
  {
    file: 'cache.json',
    path: 'compression.smaller_pct',
    comparison: '>=',
    goal: 60,
    label: 'stored user context smaller than its JSON, %',
    command: 'npm run bench:cache',
  },
  ...[0, 1, 2].map((i): Target => ({
    file: 'cache.json',
    path: `hit_ratio.runs.${i}.hit_pct`,
    comparison: '>=',
    goal: 90,
    label: `context cache hit ratio, Zipf(1.1) over 100k users at ${[500, 1000, 2000][i]} req/s (simulated clock), %`,
    command: 'npm run bench:cache',
  })),
];

/** The value at a dot path, or undefined. */
export function valueAt(doc: unknown, path: string): unknown {
  let v: unknown = doc;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** Whether a value meets a target; undefined when the value is not a number or boolean. */
export function meets(t: Target, value: unknown): boolean | undefined {
  if (typeof value === 'boolean' || typeof t.goal === 'boolean') return t.comparison === '==' && value === t.goal;
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  if (t.comparison === '>=') return value >= t.goal;
  if (t.comparison === '<=') return value <= t.goal;
  return value === t.goal;
}
