/**
 * A case's outcome events for the merchant (`review.opened`, `review.closed`), written to the webhook outbox
 * (`webhook_deliveries`, migration `006_webhooks`) in the case change's own transaction: one row per event per
 * endpoint subscribed to it, so an event is delivered if and only if its change committed. lib/webhooks delivers them.
 *
 * The payload is built from the case row, and holds only what the merchant sent or the service decided: the
 * merchant's transaction id and merchant id, the decision, the verdict, the case id and times (never the user, the
 * payment's other fields, the analyst's reason or name). Its JSON text is stored as it is sent, so every attempt
 * signs the same bytes.
 * @module
 */
import type { SqlClient } from '../platform/sql/sql-client';

/** The events a case emits. */
export type CaseEventType = 'review.opened' | 'review.closed';
export const CASE_EVENT_TYPES: readonly CaseEventType[] = ['review.opened', 'review.closed'];

/** An ISO 8601 UTC text of a `timestamptz` column, as JavaScript's `toISOString` writes it. */
const iso = (col: string): string => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Writes `type` for each case of `caseIds` to every enabled endpoint subscribed to it, on `tx` (the change's
 * transaction), due at `at`. Returns how many deliveries were written.
 */
export async function writeCaseEvents(
  tx: Pick<SqlClient, 'query'>,
  type: CaseEventType,
  caseIds: readonly string[],
  at: number,
): Promise<number> {
  if (caseIds.length === 0) return 0;
  const rows = await tx.query(
    `INSERT INTO webhook_deliveries
       (endpoint_id, case_id, transaction_id, event_type, payload, created_at, window_start, next_attempt_at)
     SELECT e.id, c.id, c.transaction_id, $2::text,
       jsonb_build_object('type', $2::text, 'timestamp', $4::text, 'data',
         jsonb_build_object('caseId', c.id::text, 'transactionId', c.transaction_id, 'merchantId', c.merchant_id,
           'decision', c.decision, 'decidedAt', ${iso('c.decided_at')}, 'openedAt', ${iso('c.opened_at')})
         || CASE WHEN $2::text = 'review.closed' AND c.closed_at IS NOT NULL
              THEN jsonb_build_object('verdict', c.verdict, 'closedAt', ${iso('c.closed_at')})
              ELSE '{}'::jsonb END)::text,
       $3::timestamptz, $3::timestamptz, $3::timestamptz
     FROM cases c JOIN webhook_endpoints e ON NOT e.disabled AND $2::text = ANY(e.events)
     WHERE c.id = ANY($1::bigint[])
     ORDER BY c.id, e.id
     RETURNING 1`,
    [caseIds, type, new Date(at).toISOString(), new Date(at).toISOString()],
  );
  return rows.length;
}
