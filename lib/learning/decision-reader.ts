/** Reads logged decisions and labels back (offline: dataset export, backtest, erasure). */
import type { DecisionRecord } from './decision-record';
import { LabelStore, type LabelValue, type StoredLabel } from './labels';
import { hourPrefixes, type LearningStore } from './learning-store';

/** The partitions holding decisions made in `[fromMs, toMs)`. */
export async function decisionPartitions(store: LearningStore, fromMs: number, toMs: number): Promise<string[]> {
  const out: string[] = [];
  for (const prefix of hourPrefixes(fromMs, toMs)) out.push(...(await store.list(prefix)));
  return out;
}

/** The records of one partition's text (blank lines skipped). */
export function parseRecords(text: string): DecisionRecord[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as DecisionRecord);
}

/**
 * Every decision made in `[fromMs, toMs)`, once per transaction (the latest record wins: a redelivery re-logs).
 * With `maxRecords`, partitions are read newest first and reading stops once that many are held (whole
 * partitions: a few more may come back); the caller says the window was cut when the count reaches it.
 */
export async function readDecisions(
  store: LearningStore,
  fromMs: number,
  toMs: number,
  maxRecords = Number.POSITIVE_INFINITY,
): Promise<DecisionRecord[]> {
  const byTx = new Map<string, DecisionRecord>();
  const partitions = await decisionPartitions(store, fromMs, toMs);
  if (Number.isFinite(maxRecords)) partitions.reverse();
  for (const name of partitions) {
    if (byTx.size >= maxRecords) break;
    for (const r of parseRecords((await store.read(name)) ?? '')) {
      const t = Date.parse(r.decidedAt);
      if (t < fromMs || t >= toMs) continue;
      const prev = byTx.get(r.transactionId);
      if (prev === undefined || prev.decidedAt <= r.decidedAt) byTx.set(r.transactionId, r);
    }
  }
  return [...byTx.values()].sort((a, b) => a.decidedAt.localeCompare(b.decidedAt));
}

/**
 * The training label of a transaction from its labels: `fraud` → 1; else `dispute_won` → 0 (the merchant won
 * the dispute: the chargeback was not fraud); else `chargeback` → 1; else `legit` or `refund` → 0.
 */
export function resolveLabel(labels: Iterable<LabelValue>): 0 | 1 | undefined {
  const s = new Set(labels);
  if (s.has('fraud')) return 1;
  if (s.has('dispute_won')) return 0;
  if (s.has('chargeback')) return 1;
  if (s.has('legit') || s.has('refund')) return 0;
  return undefined;
}

/** Every stored label, grouped by transaction. */
export async function labelsByTransaction(store: LearningStore): Promise<Map<string, StoredLabel[]>> {
  const out = new Map<string, StoredLabel[]>();
  for (const l of await new LabelStore(store).all()) {
    const list = out.get(l.transactionId);
    if (list === undefined) out.set(l.transactionId, [l]);
    else list.push(l);
  }
  return out;
}
