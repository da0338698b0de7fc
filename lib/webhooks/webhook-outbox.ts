/**
 * The webhook outbox's statements (`webhook_deliveries`, migration `006_webhooks`; the rows are written by
 * lib/cases/case-events.ts in the case change's transaction). A row is claimed with a lease (`next_attempt_at` moved
 * past the attempt, `FOR UPDATE SKIP LOCKED`), so instances never send one row at once, and one that dies mid-attempt
 * leaves it to the next claim. **Ordering:** a row is not claimed while an earlier row of the same case and endpoint
 * is undelivered (pending, leased or dead), so `review.closed` never reaches an endpoint before its `review.opened`.
 * Times are given by the caller (ms since the epoch).
 * @module
 */
import type { CaseEventType } from '../cases/case-events';
import type { SqlClient } from '../platform/sql/sql-client';

/** A claimed delivery. */
export interface ClaimedDelivery {
  readonly id: string;
  readonly endpointId: string;
  readonly caseId: string;
  readonly eventType: CaseEventType;
  /** The JSON text sent (the same bytes on every attempt). */
  readonly payload: string;
  /** Attempts so far, this one included. */
  readonly attempts: number;
  /** Start of its retry window (the event, or its last redelivery), ms. */
  readonly windowStart: number;
}

/** Where a claimed row goes: a webhook (url, active secrets) or the platform's topic. */
export interface DeliveryTarget {
  readonly id: string;
  readonly kind: 'webhook' | 'topic';
  readonly url: string;
  readonly secrets: readonly string[];
}

/** A delivery as the dead-letter list shows it (never the payload, the url or a secret). */
export interface DeliveryView {
  readonly id: string;
  readonly webhookId: string;
  readonly eventType: CaseEventType;
  /** The `webhook-id` the receiver saw. */
  readonly messageId: string;
  readonly caseId: string;
  readonly transactionId: string;
  readonly attempts: number;
  readonly createdAt: string;
  readonly lastAttemptAt?: string;
  readonly deadAt?: string;
  readonly deliveredAt?: string;
  readonly lastError?: string;
  readonly lastStatus?: number;
}

type Query = Pick<SqlClient, 'query'>;

const ts = (ms: number): string => new Date(ms).toISOString();
const isoOf = (v: unknown): string | undefined =>
  v === null || v === undefined ? undefined : new Date(v as string | Date).toISOString();
const msOf = (v: unknown): number => new Date(v as string | Date).getTime();

/** The `webhook-id` of a delivery: stable per event and endpoint (a receiver dedupes by it). */
export const messageIdOf = (deliveryId: string): string => `msg_${deliveryId}`;

/** Rows of one endpoint and case before `d` that are not delivered yet (the ordering rule). */
const EARLIER_UNDELIVERED = `EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
  AND p.case_id = d.case_id AND p.id < d.id AND p.delivered_at IS NULL)`;

/** The relay's and the API's statements on the outbox. */
export class WebhookOutbox {
  constructor(private readonly db: Query) {}

  /**
   * Claims at most `limit` rows due at `at` (oldest due first) of enabled endpoints and not behind an earlier
   * undelivered row of their case and endpoint, counting the attempt and leasing each until `at + leaseMs`.
   */
  async claim(at: number, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const rows = await this.db.query(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = $2::timestamptz,
         last_attempt_at = $1::timestamptz
       WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
                    WHERE NOT e.disabled AND d.delivered_at IS NULL AND d.dead_at IS NULL
                      AND d.next_attempt_at <= $1::timestamptz AND NOT ${EARLIER_UNDELIVERED}
                    ORDER BY d.next_attempt_at, d.id LIMIT $3::int FOR UPDATE OF d SKIP LOCKED)
       RETURNING id::text AS id, endpoint_id::text AS endpoint_id, case_id::text AS case_id, event_type, payload,
         attempts, window_start`,
      [ts(at), ts(at + leaseMs), limit],
    );
    return rows
      .map((r) => ({
        id: String(r['id']),
        endpointId: String(r['endpoint_id']),
        caseId: String(r['case_id']),
        eventType: r['event_type'] as CaseEventType,
        payload: String(r['payload']),
        attempts: Number(r['attempts']),
        windowStart: msOf(r['window_start']),
      }))
      .sort((a, b) => Number(a.id) - Number(b.id));
  }

  /** The targets of `endpointIds`, with their secrets in order (oldest first). */
  async targets(endpointIds: readonly string[]): Promise<Map<string, DeliveryTarget>> {
    if (endpointIds.length === 0) return new Map();
    const rows = await this.db.query(
      `SELECT e.id::text AS id, e.kind, e.url,
         COALESCE(array_agg(s.secret ORDER BY s.n) FILTER (WHERE s.secret IS NOT NULL), '{}') AS secrets
       FROM webhook_endpoints e LEFT JOIN webhook_secrets s ON s.endpoint_id = e.id
       WHERE e.id = ANY($1::bigint[]) GROUP BY e.id`,
      [[...new Set(endpointIds)]],
    );
    return new Map(
      rows.map((r) => [
        String(r['id']),
        {
          id: String(r['id']),
          kind: r['kind'] as DeliveryTarget['kind'],
          url: String(r['url']),
          secrets: (r['secrets'] as string[]).map(String),
        },
      ]),
    );
  }

  /** Marks a row delivered. */
  async delivered(id: string, at: number, status: number | undefined): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET delivered_at = $2::timestamptz, last_error = NULL, last_status = $3::int
       WHERE id = $1::bigint`,
      [id, ts(at), status ?? null],
    );
  }

  /** Records a failed attempt: due again at `retryAt`. `error` names what failed (no payload, no url). */
  async failed(id: string, retryAt: number, error: string, status: number | undefined): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET next_attempt_at = $2::timestamptz, last_error = $3, last_status = $4::int
       WHERE id = $1::bigint`,
      [id, ts(retryAt), error.slice(0, 200), status ?? null],
    );
  }

  /**
   * Dead-letters a row after its last failed attempt, and the later undelivered rows of its case and endpoint with it
   * (they may not overtake it). Returns how many rows were dead-lettered.
   */
  async dead(id: string, at: number, error: string, status: number | undefined): Promise<number> {
    const rows = await this.db.query(
      `UPDATE webhook_deliveries d SET dead_at = $2::timestamptz,
         last_error = CASE WHEN d.id = $1::bigint THEN $3 ELSE 'earlier_event_dead' END,
         last_status = CASE WHEN d.id = $1::bigint THEN $4::int ELSE d.last_status END
       FROM webhook_deliveries x
       WHERE x.id = $1::bigint AND d.endpoint_id = x.endpoint_id AND d.case_id = x.case_id AND d.id >= x.id
         AND d.delivered_at IS NULL AND d.dead_at IS NULL
       RETURNING 1`,
      [id, ts(at), error.slice(0, 200), status ?? null],
    );
    return rows.length;
  }

  /**
   * Dead-letters at most `limit` undelivered rows written after an earlier row of their case and endpoint was
   * dead-lettered (a verdict after its case's `review.opened` died): they could never be claimed. Returns how many.
   */
  async deadBehindDead(at: number, limit: number): Promise<number> {
    const rows = await this.db.query(
      `UPDATE webhook_deliveries SET dead_at = $1::timestamptz, last_error = 'earlier_event_dead'
       WHERE id IN (SELECT d.id FROM webhook_deliveries d
                    WHERE d.delivered_at IS NULL AND d.dead_at IS NULL
                      AND EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
                                  AND p.case_id = d.case_id AND p.id < d.id AND p.dead_at IS NOT NULL)
                    ORDER BY d.id LIMIT $2::int FOR UPDATE OF d SKIP LOCKED)
       RETURNING 1`,
      [ts(at), limit],
    );
    return rows.length;
  }

  /**
   * Brings a dead row back, with every dead row of its case and endpoint (in their order), due at `at` with a new
   * retry window. Returns the ids brought back (empty when `id` is not a dead row).
   */
  async redeliver(id: string, at: number): Promise<string[]> {
    const rows = await this.db.query(
      `UPDATE webhook_deliveries d SET dead_at = NULL, next_attempt_at = $2::timestamptz,
         window_start = $2::timestamptz, attempts = 0
       FROM webhook_deliveries x
       WHERE x.id = $1::bigint AND x.dead_at IS NOT NULL AND d.endpoint_id = x.endpoint_id AND d.case_id = x.case_id
         AND d.dead_at IS NOT NULL
       RETURNING d.id::text AS id`,
      [id, ts(at)],
    );
    return rows.map((r) => String(r['id'])).sort((a, b) => Number(a) - Number(b));
  }

  /** When the next claimable row is due (ms since the epoch), or `undefined` when none is. */
  async nextDue(): Promise<number | undefined> {
    const rows = await this.db.query(
      `SELECT (extract(epoch FROM min(d.next_attempt_at)) * 1000)::float8 AS due
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE NOT e.disabled AND d.delivered_at IS NULL AND d.dead_at IS NULL AND NOT ${EARLIER_UNDELIVERED}`,
    );
    const due = rows[0]?.['due'];
    return due === null || due === undefined ? undefined : Number(due);
  }

  /** Deletes at most `limit` rows delivered before `before`; returns how many. */
  async purgeDelivered(before: number, limit: number): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE delivered_at IS NOT NULL AND delivered_at < $1::timestamptz
         LIMIT $2::int)
       RETURNING 1`,
      [ts(before), limit],
    );
    return rows.length;
  }

  /**
   * A page of the webhooks' deliveries in `state` (`dead`, `pending` or `delivered`), newest first, before the id
   * `before`; at most `limit`. The topic's rows are not listed.
   */
  async list(state: 'dead' | 'pending' | 'delivered', limit: number, before?: string): Promise<DeliveryView[]> {
    const where =
      state === 'dead'
        ? 'd.dead_at IS NOT NULL'
        : state === 'delivered'
          ? 'd.delivered_at IS NOT NULL'
          : 'd.delivered_at IS NULL AND d.dead_at IS NULL';
    const rows = await this.db.query(
      `SELECT d.id::text AS id, d.endpoint_id::text AS endpoint_id, d.event_type, d.case_id::text AS case_id,
         d.transaction_id, d.attempts, d.created_at, d.last_attempt_at, d.dead_at, d.delivered_at, d.last_error,
         d.last_status
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.kind = 'webhook'
       WHERE ${where} AND ($2::bigint IS NULL OR d.id < $2::bigint)
       ORDER BY d.id DESC LIMIT $1::int`,
      [limit, before ?? null],
    );
    return rows.map((r) => viewOf(r));
  }

  /** Undelivered rows (pending or dead), for metrics and tests. */
  async undelivered(): Promise<{ pending: number; dead: number }> {
    const rows = await this.db.query(
      `SELECT count(*) FILTER (WHERE dead_at IS NULL)::int AS pending, count(*) FILTER (WHERE dead_at IS NOT NULL)::int AS dead
       FROM webhook_deliveries WHERE delivered_at IS NULL`,
    );
    return { pending: Number(rows[0]?.['pending'] ?? 0), dead: Number(rows[0]?.['dead'] ?? 0) };
  }
}

function viewOf(r: Record<string, unknown>): DeliveryView {
  const opt = <K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } =>
    (v === undefined ? {} : { [k]: v }) as { [P in K]?: V };
  const id = String(r['id']);
  return {
    id,
    webhookId: String(r['endpoint_id']),
    eventType: r['event_type'] as CaseEventType,
    messageId: messageIdOf(id),
    caseId: String(r['case_id']),
    transactionId: String(r['transaction_id']),
    attempts: Number(r['attempts']),
    createdAt: isoOf(r['created_at']) ?? '',
    ...opt('lastAttemptAt', isoOf(r['last_attempt_at'])),
    ...opt('deadAt', isoOf(r['dead_at'])),
    ...opt('deliveredAt', isoOf(r['delivered_at'])),
    ...opt('lastError', r['last_error'] === null ? undefined : (r['last_error'] as string | undefined)),
    ...opt(
      'lastStatus',
      r['last_status'] === null || r['last_status'] === undefined ? undefined : Number(r['last_status']),
    ),
  };
}
