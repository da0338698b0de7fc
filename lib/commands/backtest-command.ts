/**
 * `npm run backtest -- --ruleset <file> [--model <manifest>] --from <date> --to <date> [--lists <file>]
 * [--use-current-lists] [--signals <document>]`:
 * replays the decisions logged in `[from, to)` against a candidate ruleset (and, with `--model`, the candidate
 * model's scores of the logged features), and prints the candidate next to what was decided: decision changes by
 * direction, approval and decline rates, precision and recall against the labels. `--lists` is a JSON object
 * `{ "<list>": ["raw value", ...] }`, today's entries: entries are hashed with the log's key where the log holds
 * hashes. A list a logged decision consulted is replayed with the membership it recorded; today's entries are
 * used for records logged before memberships were, and, with `--use-current-lists`, for lists the logged
 * decisions did not consult (without it, the rules on such a list are left out of the replay and listed).
 * Rules that read a raw id field are listed as not replayable and left out of the replay. Rules that read
 * `signals.<name>` are replayed with the values each decision logged; a signal a decision did not log (it did not
 * exist yet) is reported, and only with `--signals <document>` are that version's aggregates replayed over the log
 * in time order (today's definitions over past payments; the report says which).
 */
import { readFileSync } from 'node:fs';
import { replayAggregates } from '../learning/signals-replay';
import { MemoryAggregateStore } from '../signals/memory-aggregate-store';
import { loadSignals } from '../signals/shipped-signals';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/config';
import { compileRuleset } from '../decisioning/compile-ruleset';
import { loadRuleset } from '../decisioning/load-ruleset';
import { FEATURE_NAMES } from '../features/featurizer';
import { backtest, notReplayable, type BacktestReport, type ReplayFigures } from '../learning/backtest';
import { labelsByTransaction, readDecisions, resolveLabel } from '../learning/decision-reader';
import type { DecisionRecord } from '../learning/decision-record';
import { manifestSchema, type ModelManifest } from '../models/manifest';
import { scoreWithOnnx } from '../training/train-fraud-model';
import { dateArg, hashFromConfig, storeOf } from './learning-cli';

function manifestAt(file: string): { manifest: ModelManifest; onnx: Buffer } {
  const manifest = manifestSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  return { manifest, onnx: readFileSync(join(dirname(file), manifest.file)) };
}

/** Runs the backtest; returns the report (also printed). */
export async function backtestCommand(
  argv: readonly string[],
  config: Config,
): Promise<BacktestReport & ReplayFigures> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      ruleset: { type: 'string' },
      model: { type: 'string' },
      current: { type: 'string' },
      lists: { type: 'string' },
      'use-current-lists': { type: 'boolean' },
      signals: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
    },
    strict: true,
  });
  if (values.ruleset === undefined && values.model === undefined)
    throw new Error('pass --ruleset <file> and/or --model <manifest>');
  const from = dateArg('from', values.from);
  const to = dateArg('to', values.to);
  const store = storeOf(config);
  const current = manifestAt(values.current ?? join('models', 'fraud', '1.0.0.json'));
  const model = values.model === undefined ? undefined : manifestAt(resolve(values.model));
  const thresholds = (model ?? current).manifest.thresholds;
  const records = await readDecisions(store, from, to);
  const scores = model === undefined ? undefined : await modelScores(records, model.onnx);
  let ruleset;
  let excluded: ReturnType<typeof notReplayable> = [];
  if (values.ruleset !== undefined) {
    const text = readFileSync(values.ruleset, 'utf8');
    const full = loadRuleset(text, thresholds, values.ruleset); // the whole candidate must be valid, golden cases included
    excluded = notReplayable(full.document);
    const skip = new Set(excluded.map((e) => e.id));
    ruleset = compileRuleset({
      ...full.document,
      rules: full.document.rules.filter((r) => !skip.has(r.id)),
      offsets: full.document.offsets.filter((o) => !skip.has(o.id)),
      golden: [],
    });
  }
  const labels = new Map<string, 0 | 1>();
  for (const [tx, ls] of await labelsByTransaction(store)) {
    const y = resolveLabel(ls.map((l) => l.label));
    if (y !== undefined) labels.set(tx, y);
  }
  // asked for: the aggregates of a signals version that decisions did not log, replayed over the log in time order
  let replayedSignals: { names: readonly string[]; values: ReadonlyMap<string, Record<string, number>> } | undefined;
  if (values.signals !== undefined) {
    const signals = loadSignals(readFileSync(values.signals, 'utf8'), values.signals);
    const r = await replayAggregates(records, signals, new MemoryAggregateStore());
    replayedSignals = { names: r.stats.replayed, values: r.values };
  }
  const lists =
    values.lists === undefined
      ? undefined
      : (JSON.parse(readFileSync(values.lists, 'utf8')) as Record<string, readonly string[]>);
  const report = backtest(
    records,
    labels,
    {
      ...(ruleset === undefined ? {} : { ruleset }),
      ...(scores === undefined ? {} : { scores }),
      thresholds,
      useCurrentLists: values['use-current-lists'] === true,
      ...(replayedSignals === undefined ? {} : { replayedSignals }),
      ...(lists === undefined ? {} : { lists, hash: await hashFromConfig(config) }),
    },
    excluded,
  );
  printReport(report);
  return report;
}

/** The candidate model's score of each logged decision's features, by transaction (none when there is no record). */
async function modelScores(records: readonly DecisionRecord[], onnx: Buffer): Promise<Map<string, number> | undefined> {
  if (records.length === 0) return undefined;
  const d = FEATURE_NAMES.length;
  const x = new Float32Array(records.length * d);
  records.forEach((r, i) => FEATURE_NAMES.forEach((f, j) => (x[i * d + j] = r.features[f] ?? Number.NaN)));
  const s = await scoreWithOnnx(onnx, x, records.length);
  return new Map(records.map((r, i) => [r.transactionId, s[i] as number]));
}

/** Prints the candidate next to what was decided, and what the replay left out or replayed otherwise. */
function printReport(report: BacktestReport): void {
  const pct = (v: number): string => `${(v * 100).toFixed(1)} %`.padStart(8);
  console.log(`decisions ${report.decisions}, labelled ${report.labelled}`);
  console.log('                current   candidate');
  for (const k of ['approvalRate', 'declineRate', 'precision', 'recall'] as const)
    console.log(`${k.padEnd(14)}${pct(report.current[k])}   ${pct(report.candidate[k])}`);
  console.log(
    `changes: ${
      Object.entries(report.changes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }`,
  );
  if (report.wouldEscalate > 0)
    console.log(`the candidate would escalate ${report.wouldEscalate} (replayed without the LLM)`);
  printLists(report);
  printSignals(report);
  for (const e of report.notReplayable)
    console.log(
      `NOT REPLAYABLE: ${e.id} reads ${e.fields.join(', ')} (the log holds keyed hashes only); left out of the replay`,
    );
}

/** Which signals the candidate's rules read were replayed, or missing from decisions made before they existed. */
function printSignals({ signals }: BacktestReport): void {
  if (signals === undefined) return;
  if (signals.replayed.length > 0)
    console.log(`signals replayed over the log (--signals, today's definitions): ${signals.replayed.join(', ')}`);
  if (signals.recordsWithout > 0)
    console.log(
      `SIGNALS NOT LOGGED: ${signals.notLogged.join(', ')} on ${signals.recordsWithout} records (decided before they existed): rules reading them fail closed there; --signals <document> replays aggregates over the log`,
    );
}

/** How the candidate's lists were replayed (today's entries, or rules left out for lists the log did not record). */
function printLists({ lists }: BacktestReport): void {
  if (lists.recordsWithoutMemberships > 0)
    console.log(
      `${lists.recordsWithoutMemberships} records were logged before list memberships were: replayed with today's entries`,
    );
  if (lists.currentEntries.length > 0)
    console.log(`lists replayed with today's entries (--lists): ${lists.currentEntries.join(', ')}`);
  for (const n of lists.notReplayed)
    console.log(
      `LIST NOT REPLAYED: ${n.list} (the logged decisions did not consult it): ${n.rules.join(', ')} left out on ${n.records} records; --use-current-lists replays it with today's entries`,
    );
}
