/**
 * The replay of a signals version's aggregates over the decision log (docs/signals.md "Training on a signals
 * version"): for an aggregate the log lacks (declared after those decisions were made), every logged decision is
 * replayed in time order (`decidedAt`, then transaction id) through an in-process aggregate store, so each decision
 * gets the value it would have seen: the payments before it and itself, never a later one.
 *
 * What differs from serving, and why it is documented rather than hidden:
 * - the log keeps personal fields as keyed hashes, so keys and distinct values are hashes (counts are the same:
 *   one value, one hash); a `where` that compares such a field with a literal sees the hash and does not match;
 * - time is the decision's `decidedAt` (serving uses the instance's clock when the payment arrived: the two differ by
 *   the scoring time);
 * - only decisions in the log are counted: payments refused before scoring, or in an erased range, are not.
 * Values the log holds (the decision's own `signals`) always win over replayed ones: they are what the decision saw.
 */
import type { PaymentEvent } from '../domain/payment-event';
import type { AggregateStore } from '../signals/aggregate-store';
import type { CompiledSignals } from '../signals/compiled-signals';
import type { DecisionRecord } from './decision-record';

/** What a replay found. */
export interface ReplayStats {
  /** Decisions replayed (every one in the range, labelled or not). */
  readonly decisions: number;
  /** The aggregates computed by replay (those some decision had not logged). */
  readonly replayed: readonly string[];
}

/**
 * Replays `records` (any order; sorted here) through `store` for `signals`' aggregates.
 * @returns per transaction id, the aggregate values by name that its record lacked (the others are logged).
 */
export async function replayAggregates(
  records: readonly DecisionRecord[],
  signals: CompiledSignals,
  store: AggregateStore,
): Promise<{ values: Map<string, Record<string, number>>; stats: ReplayStats }> {
  const names = signals.plan.aggregates.map((a) => a.name);
  const logged = (r: DecisionRecord, n: string): boolean => r.signals?.[n] !== undefined || r.features[n] !== undefined;
  const missing = names.filter((n) => records.some((r) => !logged(r, n)));
  const values = new Map<string, Record<string, number>>();
  if (missing.length === 0) return { values, stats: { decisions: 0, replayed: [] } };
  const ordered = [...records].sort(
    (a, b) =>
      Date.parse(a.decidedAt) - Date.parse(b.decidedAt) ||
      (a.transactionId < b.transactionId ? -1 : a.transactionId > b.transactionId ? 1 : 0),
  );
  for (const r of ordered) {
    const event = r.event as unknown as PaymentEvent;
    const input = signals.aggregateInput(event, r.transactionId, Date.parse(r.decidedAt));
    const got = await store.record(signals.plan, input);
    const lacking: Record<string, number> = {};
    let any = false;
    names.forEach((n, i) => {
      if (logged(r, n)) return;
      lacking[n] = got[i] ?? 0;
      any = true;
    });
    if (any) values.set(r.transactionId, lacking);
  }
  return { values, stats: { decisions: ordered.length, replayed: missing } };
}
