/**
 * Erasure of one person from the decision log. Every record whose `event.userId` is the user's keyed hash is
 * removed (each partition holding one is rewritten), and so are the labels of those transactions. The person's
 * email, IP address and card fingerprint ({@link LINKED_FIELDS}: the keyed hashes found in the user's own
 * records, and any given) are also stripped from the records of other users that carry them: those records stay,
 * without the field (and without its name in `hashed`).
 */
import type { DecisionRecord, LoggedValue } from './decision-record';
import { parseRecords } from './decision-reader';
import { labelName, LABELS } from './labels';
import type { LearningStore } from './learning-store';

/** Logged fields (paths) that identify a person beyond their user id, and that erasure follows. */
export const LINKED_FIELDS = ['email', 'ipAddress', 'cardFingerprint', 'card.fingerprint'] as const;

/** What an erasure removed. */
export interface Erased {
  readonly partitions: number;
  readonly records: number;
  readonly labels: number;
  /** Records of other users kept, with the person's email, IP address or card fingerprint stripped. */
  readonly rewritten: number;
}

const KEYED_HASH = /^h_[0-9a-f]{32}$/;

function valueAt(event: Readonly<Record<string, LoggedValue>>, path: string): unknown {
  const [head = '', tail] = path.split('.', 2);
  const v = event[head];
  return tail === undefined ? v : typeof v === 'object' ? v[tail] : undefined;
}

/** `r` without the linked fields whose hash is in `linked`; `r` itself when it carries none. */
function stripLinked(r: DecisionRecord, linked: ReadonlySet<string>): DecisionRecord {
  const paths = LINKED_FIELDS.filter((p) => {
    const v = valueAt(r.event, p);
    return typeof v === 'string' && linked.has(v);
  });
  if (paths.length === 0) return r;
  const event: Record<string, LoggedValue> = { ...r.event };
  for (const p of paths) {
    const [head = '', tail] = p.split('.', 2);
    const v = event[head];
    if (tail === undefined) delete event[head];
    else if (typeof v === 'object') {
      const { [tail]: _gone, ...rest } = v;
      if (Object.keys(rest).length > 0) event[head] = rest;
      else delete event[head];
    }
  }
  return { ...r, event, hashed: r.hashed.filter((h) => !(paths as string[]).includes(h)) };
}

/**
 * Removes every decision of the user with keyed hash `userHash` (`h_…`), and their transactions' labels; strips
 * the person's linked fields ({@link LINKED_FIELDS}) from other users' records.
 * @param userHash the user's keyed hash; `undefined` to strip only `linkedHashes`.
 * @param linkedHashes keyed hashes of the person's email, IP address or card fingerprint, beside those found in
 *   the user's records.
 */
export async function eraseUser(
  store: LearningStore,
  userHash: string | undefined,
  linkedHashes: readonly string[] = [],
): Promise<Erased> {
  for (const h of [...(userHash === undefined ? [] : [userHash]), ...linkedHashes])
    if (!KEYED_HASH.test(h)) throw new Error('not a keyed hash (h_ + 32 hex digits)');
  const names = await store.list('decisions/');
  const linked = new Set(linkedHashes);
  if (userHash !== undefined)
    for (const name of names) {
      const text = (await store.read(name)) ?? '';
      if (!text.includes(userHash)) continue;
      for (const r of parseRecords(text))
        if (r.event['userId'] === userHash)
          for (const p of LINKED_FIELDS) {
            const v = valueAt(r.event, p);
            if (typeof v === 'string' && KEYED_HASH.test(v)) linked.add(v);
          }
    }
  const needles = userHash === undefined ? [...linked] : [userHash, ...linked];
  let partitions = 0;
  let records = 0;
  let rewritten = 0;
  const transactions = new Set<string>();
  for (const name of names) {
    const text = (await store.read(name)) ?? '';
    if (!needles.some((n) => text.includes(n))) continue;
    const keep: DecisionRecord[] = [];
    let changed = false;
    for (const r of parseRecords(text)) {
      if (userHash !== undefined && r.event['userId'] === userHash) {
        transactions.add(r.transactionId);
        records++;
        changed = true;
        continue;
      }
      const s = stripLinked(r, linked);
      if (s !== r) {
        rewritten++;
        changed = true;
      }
      keep.push(s);
    }
    if (!changed) continue;
    await store.replace(name, keep.map((r) => JSON.stringify(r)).join('\n') + (keep.length > 0 ? '\n' : ''));
    partitions++;
  }
  let labels = 0;
  for (const tx of transactions)
    for (const l of LABELS) {
      const name = labelName(tx, l);
      if ((await store.read(name)) === undefined) continue;
      await store.replace(name, '');
      labels++;
    }
  return { partitions, records, labels, rewritten };
}
