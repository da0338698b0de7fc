/**
 * The training set: logged decisions joined with their labels (docs/learning-loop.md "Dataset format").
 * One JSON line per labelled decision:
 *
 *     { "transactionId", "decidedAt", "model": { name, version }, "ruleset"?: { name, version },
 *       "features": { <name>: number, ... }, "signals"?: { <name>: number, ... }, "signalsVersion"?: { name, version },
 *       "score", "decision", "labels": ["chargeback"], "label": 0 | 1 }
 */
import type { DecisionRecord } from './decision-record';
import { labelsByTransaction, readDecisions, resolveLabel } from './decision-reader';
import type { LearningStore } from './learning-store';
import { MemoryAggregateStore } from '../signals/memory-aggregate-store';
import type { CompiledSignals } from '../signals/compiled-signals';
import { replayAggregates, type ReplayStats } from './signals-replay';

/** One row of the training set. */
export interface DatasetRow {
  readonly transactionId: string;
  readonly decidedAt: string;
  readonly model: DecisionRecord['model'];
  readonly ruleset?: DecisionRecord['ruleset'];
  readonly features: Readonly<Record<string, number>>;
  /** The signal values the decision used (logged since signals; docs/signals.md), and their version. */
  readonly signals?: Readonly<Record<string, number>>;
  readonly signalsVersion?: DecisionRecord['signalsVersion'];
  readonly score: number | null;
  readonly decision: string;
  readonly labels: readonly string[];
  readonly label: 0 | 1;
}

/** What an export found. */
export interface DatasetStats {
  readonly decisions: number;
  readonly labelled: number;
  readonly positives: number;
  /** Stored labels whose decision is not in the range (kept; joined by a later export). */
  readonly labelsWithoutDecision: number;
}

/** Options of {@link exportDataset}. */
export interface ExportOptions {
  /**
   * A signals version whose aggregates the rows get: logged values as they are, the others replayed over the
   * range's decisions in time order (lib/learning/signals-replay.ts).
   */
  readonly signals?: CompiledSignals;
}

/**
 * Joins the decisions made in `[fromMs, toMs)` with their labels; unlabelled decisions are left out. With
 * `options.signals`, each row's `signals` also holds that version's aggregates (replayed where not logged).
 */
export async function exportDataset(
  store: LearningStore,
  fromMs: number,
  toMs: number,
  options: ExportOptions = {},
): Promise<{ rows: DatasetRow[]; stats: DatasetStats; replay?: ReplayStats }> {
  const decisions = await readDecisions(store, fromMs, toMs);
  const labels = await labelsByTransaction(store);
  const replay =
    options.signals === undefined
      ? undefined
      : await replayAggregates(decisions, options.signals, new MemoryAggregateStore());
  const rows: DatasetRow[] = [];
  const seen = new Set<string>();
  for (const d of decisions) {
    seen.add(d.transactionId);
    const ls = labels.get(d.transactionId);
    const label = ls === undefined ? undefined : resolveLabel(ls.map((l) => l.label));
    if (ls === undefined || label === undefined) continue;
    rows.push({
      transactionId: d.transactionId,
      decidedAt: d.decidedAt,
      model: d.model,
      ...(d.ruleset === undefined ? {} : { ruleset: d.ruleset }),
      features: d.features,
      ...signalsOfRow(d, replay?.values.get(d.transactionId)),
      ...(d.signalsVersion === undefined ? {} : { signalsVersion: d.signalsVersion }),
      score: d.score,
      decision: d.decision,
      labels: [...new Set(ls.map((l) => l.label))].sort(),
      label,
    });
  }
  const positives = rows.filter((r) => r.label === 1).length;
  const orphans = [...labels.keys()].filter((t) => !seen.has(t)).length;
  return {
    rows,
    stats: { decisions: decisions.length, labelled: rows.length, positives, labelsWithoutDecision: orphans },
    ...(replay === undefined ? {} : { replay: replay.stats }),
  };
}

/** A row's `signals`: the logged values, with the replayed ones the decision did not log. */
function signalsOfRow(
  d: DecisionRecord,
  replayed: Readonly<Record<string, number>> | undefined,
): { signals?: Readonly<Record<string, number>> } {
  if (d.signals === undefined && replayed === undefined) return {};
  return { signals: { ...replayed, ...d.signals } };
}

/** The rows as JSON Lines text. */
export function datasetText(rows: readonly DatasetRow[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length > 0 ? '\n' : '');
}

/** Parses a dataset file. @throws Error naming the first bad line. */
export function parseDataset(text: string): DatasetRow[] {
  return text
    .split('\n')
    .map((l, i) => [l, i + 1] as const)
    .filter(([l]) => l.trim() !== '')
    .map(([l, n]) => {
      const r = JSON.parse(l) as DatasetRow;
      if (typeof r.features !== 'object' || (r.label !== 0 && r.label !== 1))
        throw new Error(`dataset line ${n}: needs features and a 0/1 label`);
      return r;
    });
}
