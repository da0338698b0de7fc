/**
 * Erasure of one user from the decision log: every record whose `event.userId` is the user's keyed hash is
 * removed (each partition holding one is rewritten), and so are the labels of those transactions.
 */
import { parseRecords } from './decision-reader';
import { labelName, LABELS } from './labels';
import type { LearningStore } from './learning-store';

/** What an erasure removed. */
export interface Erased {
  readonly partitions: number;
  readonly records: number;
  readonly labels: number;
}

/** Removes every decision of the user with keyed hash `userHash` (`h_…`), and their transactions' labels. */
export async function eraseUser(store: LearningStore, userHash: string): Promise<Erased> {
  if (!/^h_[0-9a-f]{32}$/.test(userHash)) throw new Error('not a keyed hash (h_ + 32 hex digits)');
  let partitions = 0;
  let records = 0;
  const transactions = new Set<string>();
  for (const name of await store.list('decisions/')) {
    const text = (await store.read(name)) ?? '';
    if (!text.includes(userHash)) continue;
    const all = parseRecords(text);
    const keep = all.filter((r) => r.event['userId'] !== userHash);
    if (keep.length === all.length) continue;
    for (const r of all) if (r.event['userId'] === userHash) transactions.add(r.transactionId);
    await store.replace(name, keep.map((r) => JSON.stringify(r)).join('\n') + (keep.length > 0 ? '\n' : ''));
    partitions++;
    records += all.length - keep.length;
  }
  let labels = 0;
  for (const tx of transactions)
    for (const l of LABELS) {
      const name = labelName(tx, l);
      if ((await store.read(name)) === undefined) continue;
      await store.replace(name, '');
      labels++;
    }
  return { partitions, records, labels };
}
