/**
 * The webhook endpoints and their secrets in PostgreSQL (`webhook_endpoints`, `webhook_secrets`, migration
 * `006_webhooks`). Secrets are stored as given (HMAC needs the key itself to sign) and never read back by the API: the
 * views list their numbers and times only. The platform's topic is an endpoint of kind `topic`, kept by the relay's
 * start-up ({@link WebhookEndpoints.setTopic}) and never listed.
 * @module
 */
import type { CaseEventType } from '../cases/case-events';
import type { SqlClient } from '../platform/sql/sql-client';

/** An endpoint as the API shows it (no secret). */
export interface WebhookView {
  readonly id: string;
  readonly url: string;
  readonly events: readonly CaseEventType[];
  /** The active secrets, by number (the `{n}` of `DELETE /api/webhooks/{id}/secrets/{n}`), oldest first. */
  readonly secrets: readonly { readonly n: number; readonly createdAt: string }[];
  readonly createdBy: string;
  readonly createdAt: string;
  readonly disabled: boolean;
}

/** Most endpoints (webhooks) that may be registered. */
export const MAX_ENDPOINTS = 100;
/** Most active secrets per endpoint. */
export const MAX_SECRETS = 5;

type Query = Pick<SqlClient, 'query'>;

const ts = (ms: number): string => new Date(ms).toISOString();
const iso = (v: unknown): string => new Date(v as string | Date).toISOString();

/** The result of a change that can be refused. */
export type EndpointChange<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly why: 'not_found' | 'too_many' | 'last_secret' };

/** The statements on the endpoints. */
export class WebhookEndpoints {
  constructor(private readonly db: Pick<SqlClient, 'query' | 'transaction'>) {}

  /** Registers an endpoint with its first secret; refused beyond {@link MAX_ENDPOINTS}. */
  async create(
    e: {
      readonly url: string;
      readonly events: readonly CaseEventType[];
      readonly secret: string;
      readonly actor: string;
    },
    at: number,
  ): Promise<EndpointChange<WebhookView>> {
    return this.db.transaction(async (tx) => {
      await tx.query(`LOCK TABLE webhook_endpoints IN SHARE ROW EXCLUSIVE MODE`);
      const n = await tx.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE kind = 'webhook'`);
      if (Number(n[0]?.['n'] ?? 0) >= MAX_ENDPOINTS) return { ok: false, why: 'too_many' } as const;
      const rows = await tx.query(
        `INSERT INTO webhook_endpoints (kind, url, events, created_by, created_at)
         VALUES ('webhook', $1, $2::text[], $3, $4::timestamptz) RETURNING id::text AS id`,
        [e.url, [...e.events], e.actor, ts(at)],
      );
      const id = String(rows[0]?.['id']);
      await tx.query(
        `INSERT INTO webhook_secrets (endpoint_id, n, secret, created_at) VALUES ($1::bigint, 1, $2, $3::timestamptz)`,
        [id, e.secret, ts(at)],
      );
      const view = await this.view(tx, id);
      return view === undefined ? ({ ok: false, why: 'not_found' } as const) : { ok: true, value: view };
    });
  }

  /** Every webhook endpoint, oldest first (at most {@link MAX_ENDPOINTS}). */
  async list(): Promise<WebhookView[]> {
    const rows = await this.db.query(
      `SELECT ${VIEW_COLS} FROM webhook_endpoints e LEFT JOIN webhook_secrets s ON s.endpoint_id = e.id
       WHERE e.kind = 'webhook' GROUP BY e.id ORDER BY e.id LIMIT $1::int`,
      [MAX_ENDPOINTS],
    );
    return rows.map(viewOf);
  }

  /** One webhook endpoint. */
  async get(id: string): Promise<WebhookView | undefined> {
    return this.view(this.db, id);
  }

  /** Adds a secret (rotation); refused beyond {@link MAX_SECRETS}. Returns the endpoint and the secret's number. */
  async addSecret(id: string, secret: string, at: number): Promise<EndpointChange<{ view: WebhookView; n: number }>> {
    return this.db.transaction(async (tx) => {
      const locked = await tx.query(
        `SELECT id FROM webhook_endpoints WHERE id = $1::bigint AND kind = 'webhook' FOR UPDATE`,
        [id],
      );
      if (locked.length === 0) return { ok: false, why: 'not_found' } as const;
      const s = await tx.query(
        `SELECT count(*)::int AS c, COALESCE(max(n), 0)::int AS m FROM webhook_secrets WHERE endpoint_id = $1::bigint`,
        [id],
      );
      if (Number(s[0]?.['c'] ?? 0) >= MAX_SECRETS) return { ok: false, why: 'too_many' } as const;
      const n = Number(s[0]?.['m'] ?? 0) + 1;
      await tx.query(
        `INSERT INTO webhook_secrets (endpoint_id, n, secret, created_at) VALUES ($1::bigint, $2::int, $3, $4::timestamptz)`,
        [id, n, secret, ts(at)],
      );
      const view = await this.view(tx, id);
      return view === undefined ? ({ ok: false, why: 'not_found' } as const) : { ok: true, value: { view, n } };
    });
  }

  /** Removes secret `n`; the last one is never removed (an endpoint always signs). */
  async removeSecret(id: string, n: number): Promise<EndpointChange<WebhookView>> {
    return this.db.transaction(async (tx) => {
      const locked = await tx.query(
        `SELECT id FROM webhook_endpoints WHERE id = $1::bigint AND kind = 'webhook' FOR UPDATE`,
        [id],
      );
      if (locked.length === 0) return { ok: false, why: 'not_found' } as const;
      const s = await tx.query(`SELECT n FROM webhook_secrets WHERE endpoint_id = $1::bigint`, [id]);
      if (!s.some((r) => Number(r['n']) === n)) return { ok: false, why: 'not_found' } as const;
      if (s.length === 1) return { ok: false, why: 'last_secret' } as const;
      await tx.query(`DELETE FROM webhook_secrets WHERE endpoint_id = $1::bigint AND n = $2::int`, [id, n]);
      const view = await this.view(tx, id);
      return view === undefined ? ({ ok: false, why: 'not_found' } as const) : { ok: true, value: view };
    });
  }

  /** Deletes an endpoint, its secrets and its deliveries; returns the endpoint as it was. */
  async remove(id: string): Promise<WebhookView | undefined> {
    return this.db.transaction(async (tx) => {
      const view = await this.view(tx, id);
      if (view === undefined) return undefined;
      await tx.query(`DELETE FROM webhook_endpoints WHERE id = $1::bigint AND kind = 'webhook'`, [id]);
      return view;
    });
  }

  /**
   * Keeps the platform's topic endpoint: `name` set, it exists, enabled, subscribed to every event, and any other
   * topic is disabled; `undefined`: every topic endpoint is disabled (its events are no longer written).
   */
  async setTopic(name: string | undefined, events: readonly CaseEventType[], at: number): Promise<void> {
    const url = name === undefined ? null : `servicebus:${name}`;
    await this.db.transaction(async (tx) => {
      await tx.query(`UPDATE webhook_endpoints SET disabled = true WHERE kind = 'topic' AND url IS DISTINCT FROM $1`, [
        url,
      ]);
      if (url === null) return;
      await tx.query(
        `INSERT INTO webhook_endpoints (kind, url, events, created_by, created_at)
         VALUES ('topic', $1, $2::text[], 'system', $3::timestamptz)
         ON CONFLICT (url) WHERE kind = 'topic' DO UPDATE SET disabled = false, events = EXCLUDED.events`,
        [url, [...events], ts(at)],
      );
    });
  }

  private async view(db: Query, id: string): Promise<WebhookView | undefined> {
    const rows = await db.query(
      `SELECT ${VIEW_COLS} FROM webhook_endpoints e LEFT JOIN webhook_secrets s ON s.endpoint_id = e.id
       WHERE e.id = $1::bigint AND e.kind = 'webhook' GROUP BY e.id`,
      [id],
    );
    return rows[0] === undefined ? undefined : viewOf(rows[0]);
  }
}

const VIEW_COLS = `e.id::text AS id, e.url, e.events, e.created_by, e.created_at, e.disabled,
  COALESCE(jsonb_agg(jsonb_build_object('n', s.n, 'createdAt', s.created_at) ORDER BY s.n)
    FILTER (WHERE s.n IS NOT NULL), '[]'::jsonb) AS secrets`;

function viewOf(r: Record<string, unknown>): WebhookView {
  const secrets = (typeof r['secrets'] === 'string' ? JSON.parse(r['secrets']) : r['secrets']) as {
    n: number;
    createdAt: string;
  }[];
  return {
    id: String(r['id']),
    url: String(r['url']),
    events: (r['events'] as string[]).map((e) => e as CaseEventType),
    secrets: secrets.map((s) => ({ n: Number(s.n), createdAt: iso(s.createdAt) })),
    createdBy: String(r['created_by']),
    createdAt: iso(r['created_at']),
    disabled: r['disabled'] === true,
  };
}
