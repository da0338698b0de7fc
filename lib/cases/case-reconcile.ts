/**
 * Review decisions against cases (`npm run cases:reconcile`): the decision log's `review` decisions made in a window,
 * each looked up in the case store by its transaction id (in chunks, so a window of any size stays bounded in
 * memory per query). What is missing is reported as a count and keyed hashes (the decision log's key), never raw ids.
 */
import { readDecisions } from '../learning/decision-reader';
import type { KeyedHash } from '../platform/keyed-hash';
import type { LearningStore } from '../learning/learning-store';
import type { SqlClient } from '../platform/sql/sql-client';

/** Transaction ids looked up per query. */
const CHUNK = 1000;

/** What {@link reconcileCases} found. */
export interface Reconciliation {
  /** Review decisions logged in the window (once per transaction). */
  readonly reviews: number;
  /** Of them, with a case. */
  readonly withCase: number;
  /** Keyed hashes of the transactions without a case, oldest decision first. */
  readonly missing: readonly string[];
}

/** Compares the review decisions logged in `[fromMs, toMs)` with the cases in `sql`. */
export async function reconcileCases(
  log: LearningStore,
  sql: Pick<SqlClient, 'query'>,
  hash: KeyedHash,
  fromMs: number,
  toMs: number,
): Promise<Reconciliation> {
  const reviews = (await readDecisions(log, fromMs, toMs))
    .filter((r) => r.decision === 'review')
    .sort((a, b) => a.decidedAt.localeCompare(b.decidedAt));
  const missing: string[] = [];
  for (let i = 0; i < reviews.length; i += CHUNK) {
    const ids = reviews.slice(i, i + CHUNK).map((r) => r.transactionId);
    const rows = await sql.query<{ transaction_id: string }>(
      'SELECT transaction_id FROM cases WHERE transaction_id = ANY($1::text[])',
      [ids],
    );
    const found = new Set(rows.map((r) => r.transaction_id));
    for (const id of ids) if (!found.has(id)) missing.push(hash.of(id));
  }
  return { reviews: reviews.length, withCase: reviews.length - missing.length, missing };
}
