/**
 * The webhook API's operations (`/api/webhooks`, leads only; docs/webhooks.md): register an endpoint (the answer
 * holds its secret when the service generated it, and only then), list them (never a secret), rotate secrets, delete
 * an endpoint, list the dead-letter deliveries and redeliver one. Every change is audited (kind `webhook`, name the
 * endpoint id; old and new values without the url's query, never a secret).
 * @module
 */
import type { SqlClient } from '../platform/sql/sql-client';
import { AppError } from '../errors/errors';
import type { Identity } from '../identity/identity';
import {
  WebhookEndpoints,
  MAX_ENDPOINTS,
  MAX_SECRETS,
  type EndpointChange,
  type WebhookView,
} from './webhook-endpoints';
import { WebhookOutbox, type DeliveryView } from './webhook-outbox';
import {
  parseCreateBody,
  parseDeliveriesQuery,
  parseId,
  parseSecretBody,
  parseSecretNumber,
  type QueryParams,
} from './webhook-requests';
import { generateSecret } from './webhook-signing';

/** Request headers, as the Functions `HttpRequest` has them. */
export interface Headers {
  get(name: string): string | null;
}

/** An audit entry of a webhook change (lib/governance's `AuditEntry` with kind `webhook`). */
export interface WebhookAuditEntry {
  readonly actor: string;
  readonly kind: 'webhook';
  readonly name: string;
  readonly action: string;
  readonly oldValue: unknown;
  readonly newValue: unknown;
}

/** Dependencies of a {@link WebhookService}. */
export interface WebhookServiceDeps {
  /** The case database (throws while the store is not open, or without one). */
  readonly sql: () => Pick<SqlClient, 'query' | 'transaction'>;
  readonly identity: Identity;
  /** Appends an audit entry (lib/governance); a failure is the caller's 503. */
  readonly record: (e: WebhookAuditEntry) => Promise<void>;
  /** Wall clock, ms. */
  readonly wallClock: () => number;
  /** Wakes the relay (a redelivery is due now). */
  readonly wake?: () => void;
  /** A new secret; default {@link generateSecret}. */
  readonly newSecret?: () => string;
}

/** The url as audited: without its query (which may hold a token). */
function auditedUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

const audited = (v: WebhookView): unknown => ({
  url: auditedUrl(v.url),
  events: v.events,
  secrets: v.secrets.map((s) => s.n),
});

function refused<T>(c: EndpointChange<T>): T {
  if (c.ok) return c.value;
  if (c.why === 'not_found') throw new AppError('not_found', 'No such webhook or secret.');
  if (c.why === 'last_secret')
    throw new AppError('conflict', 'An endpoint keeps at least one secret: add the new one before removing this one.');
  throw new AppError('conflict', `At most ${MAX_ENDPOINTS} endpoints, and ${MAX_SECRETS} secrets per endpoint.`);
}

/** The webhook API of one engine. */
export class WebhookService {
  constructor(private readonly d: WebhookServiceDeps) {}

  private lead(headers: Headers): string {
    return this.d.identity.require(headers, ['lead']).name;
  }

  private endpoints(): WebhookEndpoints {
    return new WebhookEndpoints(this.d.sql());
  }

  private secret(given: string | undefined): { secret: string; generated: boolean } {
    return given === undefined
      ? { secret: (this.d.newSecret ?? generateSecret)(), generated: true }
      : { secret: given, generated: false };
  }

  /** `POST /api/webhooks` `{ url, events, secret? }`: the endpoint, and `secret` when the service generated it. */
  async create(headers: Headers, body: unknown): Promise<{ webhook: WebhookView; secret?: string }> {
    const actor = this.lead(headers);
    const b = parseCreateBody(body);
    const s = this.secret(b.secret);
    const view = refused(
      await this.endpoints().create({ url: b.url, events: b.events, secret: s.secret, actor }, this.d.wallClock()),
    );
    await this.d.record({
      actor,
      kind: 'webhook',
      name: view.id,
      action: 'create',
      oldValue: null,
      newValue: audited(view),
    });
    return s.generated ? { webhook: view, secret: s.secret } : { webhook: view };
  }

  /** `GET /api/webhooks`: every endpoint, without secrets. */
  async list(headers: Headers): Promise<{ webhooks: WebhookView[] }> {
    this.lead(headers);
    return { webhooks: await this.endpoints().list() };
  }

  /** `POST /api/webhooks/{id}/secrets` `{ secret? }`: adds a secret (signatures carry every active one). */
  async addSecret(
    headers: Headers,
    rawId: string | undefined,
    body: unknown,
  ): Promise<{ webhook: WebhookView; n: number; secret?: string }> {
    const actor = this.lead(headers);
    const id = parseId(rawId, 'webhook');
    const s = this.secret(parseSecretBody(body).secret);
    const { view, n } = refused(await this.endpoints().addSecret(id, s.secret, this.d.wallClock()));
    await this.d.record({ actor, kind: 'webhook', name: id, action: 'add_secret', oldValue: null, newValue: { n } });
    return s.generated ? { webhook: view, n, secret: s.secret } : { webhook: view, n };
  }

  /** `DELETE /api/webhooks/{id}/secrets/{n}`: removes a secret (409 for the last one). */
  async removeSecret(
    headers: Headers,
    rawId: string | undefined,
    rawN: string | undefined,
  ): Promise<{ webhook: WebhookView }> {
    const actor = this.lead(headers);
    const id = parseId(rawId, 'webhook');
    const n = parseSecretNumber(rawN);
    const view = refused(await this.endpoints().removeSecret(id, n));
    await this.d.record({ actor, kind: 'webhook', name: id, action: 'remove_secret', oldValue: { n }, newValue: null });
    return { webhook: view };
  }

  /** `DELETE /api/webhooks/{id}`: the endpoint, its secrets and its undelivered events go. */
  async remove(headers: Headers, rawId: string | undefined): Promise<void> {
    const actor = this.lead(headers);
    const id = parseId(rawId, 'webhook');
    const view = await this.endpoints().remove(id);
    if (view === undefined) throw new AppError('not_found', 'No such webhook.');
    await this.d.record({
      actor,
      kind: 'webhook',
      name: id,
      action: 'delete',
      oldValue: audited(view),
      newValue: null,
    });
  }

  /** `GET /api/webhooks/deliveries?state=dead&limit=&before=`: a page, newest first, and the next page's `before`. */
  async deliveries(headers: Headers, query: QueryParams): Promise<{ deliveries: DeliveryView[]; before?: string }> {
    this.lead(headers);
    const q = parseDeliveriesQuery(query);
    const rows = await new WebhookOutbox(this.d.sql()).list(q.state, q.limit, q.before);
    const last = rows[rows.length - 1];
    return rows.length === q.limit && last !== undefined ? { deliveries: rows, before: last.id } : { deliveries: rows };
  }

  /**
   * `POST /api/webhooks/deliveries/{id}/redeliver`: a dead delivery (with the dead later events of its case and
   * endpoint) is due now, with a new retry window. @throws AppError `not_found` when it is not a dead delivery.
   */
  async redeliver(headers: Headers, rawId: string | undefined): Promise<{ redelivered: string[] }> {
    const actor = this.lead(headers);
    const id = parseId(rawId, 'delivery');
    const ids = await new WebhookOutbox(this.d.sql()).redeliver(id, this.d.wallClock());
    if (ids.length === 0) throw new AppError('not_found', 'No such dead delivery.');
    await this.d.record({
      actor,
      kind: 'webhook',
      name: id,
      action: 'redeliver',
      oldValue: null,
      newValue: { deliveries: ids },
    });
    this.d.wake?.();
    return { redelivered: ids };
  }
}
