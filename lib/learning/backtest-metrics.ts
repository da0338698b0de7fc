/** The figures a backtest compares each side by, and how they are read off decisions, labels and the log. */
import type { DecisionRecord } from './decision-record';

/** One side of the comparison. */
export interface SideMetrics {
  readonly approvalRate: number;
  readonly declineRate: number;
  /** Of labelled payments flagged (review or decline), the share that were fraud. */
  readonly precision: number;
  /** Of labelled fraud, the share flagged (review or decline). */
  readonly recall: number;
}

/** Rounded to 4 decimals, as the report gives every rate. */
export const r4 = (v: number): number => Math.round(v * 1e4) / 1e4;

/** The rates and precision and recall of one side's `decisions` against the `labels` (by index; `undefined`: unlabelled). */
export function metrics(decisions: readonly string[], labels: readonly (0 | 1 | undefined)[]): SideMetrics {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  decisions.forEach((d, i) => {
    const y = labels[i];
    if (y === undefined) return;
    const flagged = d !== 'approve';
    if (flagged && y === 1) tp++;
    else if (flagged) fp++;
    else if (y === 1) fn++;
  });
  const n = Math.max(1, decisions.length);
  return {
    approvalRate: r4(decisions.filter((d) => d === 'approve').length / n),
    declineRate: r4(decisions.filter((d) => d === 'decline').length / n),
    precision: r4(tp + fp === 0 ? 0 : tp / (tp + fp)),
    recall: r4(tp + fn === 0 ? 0 : tp / (tp + fn)),
  };
}

/** The signal values a decision logged: its `signals`, and its model inputs (`features`, signals of the same names). */
export function loggedSignals(r: DecisionRecord): Readonly<Record<string, number>> {
  return r.signals === undefined ? r.features : { ...r.features, ...r.signals };
}
