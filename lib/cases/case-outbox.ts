/**
 * The case outbox (`case_outbox`, migration `004_case_outbox`): what a verdict hands to stores outside PostgreSQL
 * (the label to the learning's labels store, a lead's list entry to the lists), written in the verdict's own
 * transaction and delivered after the commit by the {@link OutboxRelay} (lib/cases/outbox-relay.ts), at least once.
 * A row is claimed with a lease (`next_attempt_at` moved past the delivery), so instances never deliver one row at
 * once, and an instance that dies mid-delivery leaves it to be claimed again when the lease ends.
 * @module
 */
import type { SqlClient } from '../platform/sql/sql-client';

/** The label a verdict makes (`POST /api/labels`'s shape; `source` always `case`). */
export interface OutboxLabel {
  readonly transactionId: string;
  readonly label: 'fraud' | 'legit';
  /** The verdict's time, ISO 8601 UTC. */
  readonly reportedAt: string;
  readonly source: 'case';
}

/** A lead's list addition (the lists path's `addToList(list, { values, ttlSeconds? })`). */
export interface OutboxListAddition {
  readonly list: string;
  readonly values: readonly string[];
  readonly ttlSeconds?: number;
}

/** One message of the outbox. */
export type OutboxMessage =
  | { readonly kind: 'label'; readonly payload: OutboxLabel }
  | { readonly kind: 'list'; readonly payload: OutboxListAddition };

/** A claimed row: its message and how many times it has been claimed (this claim included). */
export type OutboxRow = OutboxMessage & { readonly id: string; readonly attempts: number };

type Query = Pick<SqlClient, 'query'>;

const ts = (ms: number): string => new Date(ms).toISOString();

/** Writes `message` for case `caseId` on `tx` (the verdict's transaction), due at `at`. */
export async function enqueueOutbox(tx: Query, caseId: string, message: OutboxMessage, at: number): Promise<void> {
  await tx.query(
    `INSERT INTO case_outbox (case_id, kind, payload, created_at, next_attempt_at)
     VALUES ($1::bigint, $2, $3::jsonb, $4::timestamptz, $4::timestamptz)`,
    [caseId, message.kind, JSON.stringify(message.payload), ts(at)],
  );
}

/** The relay's statements on the outbox. Times are given by the caller (ms since the epoch). */
export class CaseOutbox {
  constructor(private readonly db: Query) {}

  /**
   * Claims at most `limit` rows due at `at` (oldest due first), counting the attempt and leasing each until
   * `at + leaseMs`; rows another instance holds are skipped (`FOR UPDATE SKIP LOCKED`).
   */
  async claim(at: number, limit: number, leaseMs: number): Promise<OutboxRow[]> {
    const rows = await this.db.query(
      `UPDATE case_outbox SET attempts = attempts + 1, next_attempt_at = $2::timestamptz
       WHERE id IN (SELECT id FROM case_outbox WHERE delivered_at IS NULL AND next_attempt_at <= $1::timestamptz
                    ORDER BY next_attempt_at, id LIMIT $3::int FOR UPDATE SKIP LOCKED)
       RETURNING id::text AS id, kind, payload, attempts`,
      [ts(at), ts(at + leaseMs), limit],
    );
    return rows
      .map((r) => ({
        id: String(r['id']),
        kind: r['kind'] as OutboxRow['kind'],
        payload: r['payload'],
        attempts: Number(r['attempts']),
      }))
      .sort((a, b) => Number(a.id) - Number(b.id)) as OutboxRow[];
  }

  /** Marks a row delivered. */
  async delivered(id: string, at: number): Promise<void> {
    await this.db.query(
      `UPDATE case_outbox SET delivered_at = $2::timestamptz, last_error = NULL WHERE id = $1::bigint`,
      [id, ts(at)],
    );
  }

  /** Records a failed delivery: the row is due again at `retryAt`; `error` names what failed (no payload data). */
  async failed(id: string, retryAt: number, error: string): Promise<void> {
    await this.db.query(
      `UPDATE case_outbox SET next_attempt_at = $2::timestamptz, last_error = $3 WHERE id = $1::bigint`,
      [id, ts(retryAt), error.slice(0, 500)],
    );
  }

  /** When the next undelivered row is due (ms since the epoch), or `undefined` when none is left. */
  async nextDue(): Promise<number | undefined> {
    const rows = await this.db.query(
      `SELECT (extract(epoch FROM min(next_attempt_at)) * 1000)::float8 AS due FROM case_outbox WHERE delivered_at IS NULL`,
    );
    const due = rows[0]?.['due'];
    return due === null || due === undefined ? undefined : Number(due);
  }

  /** Deletes at most `limit` rows delivered before `before`; returns how many. */
  async purgeDelivered(before: number, limit: number): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM case_outbox WHERE id IN (
         SELECT id FROM case_outbox WHERE delivered_at IS NOT NULL AND delivered_at < $1::timestamptz LIMIT $2::int)
       RETURNING 1`,
      [ts(before), limit],
    );
    return rows.length;
  }

  /** Rows not delivered yet (metrics, tests). */
  async pending(): Promise<number> {
    const rows = await this.db.query(`SELECT count(*)::int AS n FROM case_outbox WHERE delivered_at IS NULL`);
    return Number(rows[0]?.['n'] ?? 0);
  }
}
