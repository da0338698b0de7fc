/**
 * Validation of the webhook API's inputs: the bodies of `POST /api/webhooks` and `POST /api/webhooks/{id}/secrets`,
 * the ids in routes, and the query of `GET /api/webhooks/deliveries`. Every invalid field is named
 * (`validation_failed`); unknown fields and query parameters are refused.
 *
 * **Endpoint urls.** `https://` only, except `http://` to a loopback host (`localhost`, `127.0.0.0/8`, `[::1]`: a
 * receiver on the same machine, as under `npm start` and in the tests). No user name or password in the url, at most
 * 2 048 characters. The service does not resolve the host: registering endpoints is for leads.
 * @module
 */
import { z } from 'zod';
import { CASE_EVENT_TYPES, type CaseEventType } from '../cases/case-events';
import { AppError, type FieldError } from '../errors/errors';
import { parseWithSchema } from '../http/contract';
import { secretProblem } from './webhook-signing';

const ID = /^[1-9]\d{0,17}$/;
const MAX_URL_CHARS = 2048;

/** Whether `host` (a URL's `hostname`) is a loopback host. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Why `raw` may not be an endpoint's url, or `undefined` when it may. */
export function urlProblem(raw: string): string | undefined {
  if (raw.length > MAX_URL_CHARS) return `must be at most ${MAX_URL_CHARS} characters`;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'must be an absolute https:// url';
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname)))
    return 'must be https:// (http:// only to a loopback host)';
  if (u.username !== '' || u.password !== '') return 'must not hold a user name or password';
  if (u.hash !== '') return 'must not hold a fragment';
  return undefined;
}

const urlSchema = z.string().superRefine((v, ctx) => {
  const problem = urlProblem(v);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});
const secretSchema = z.string().superRefine((v, ctx) => {
  const problem = secretProblem(v);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});
const eventsSchema = z
  .array(
    z.enum(CASE_EVENT_TYPES as [CaseEventType, ...CaseEventType[]], {
      error: 'must be review.opened or review.closed',
    }),
  )
  .min(1, { error: 'must name at least one event' })
  .max(CASE_EVENT_TYPES.length)
  .refine((a) => new Set(a).size === a.length, { error: 'must not repeat an event' });

/** The body of `POST /api/webhooks` (lib/contracts/webhooks.ts declares the route with it). */
export const createSchema = z.strictObject({ url: urlSchema, events: eventsSchema, secret: secretSchema.optional() });
/** The body of `POST /api/webhooks/{id}/secrets` (optional). */
export const secretBodySchema = z.strictObject({ secret: secretSchema.optional() });

/** A `POST /api/webhooks` body. */
export interface CreateWebhookBody {
  readonly url: string;
  readonly events: readonly CaseEventType[];
  readonly secret?: string;
}

/** @throws AppError `validation_failed` naming every bad field. */
export function parseCreateBody(body: unknown): CreateWebhookBody {
  return parseWithSchema(createSchema, body) as CreateWebhookBody;
}

/** A `POST /api/webhooks/{id}/secrets` body (`{}` or none: the service generates the secret). */
export function parseSecretBody(body: unknown): { readonly secret?: string } {
  return parseWithSchema(secretBodySchema, body ?? {}) as { readonly secret?: string };
}

/** An id from a route. @throws AppError `not_found` for anything that is not an id. */
export function parseId(raw: string | undefined, what: string): string {
  if (raw === undefined || !ID.test(raw)) throw new AppError('not_found', `No such ${what}.`);
  return raw;
}

/** A secret's number from a route. @throws AppError `not_found`. */
export function parseSecretNumber(raw: string | undefined): number {
  if (raw === undefined || !/^[1-9]\d{0,8}$/.test(raw)) throw new AppError('not_found', 'No such secret.');
  return Number(raw);
}

/** A parsed `GET /api/webhooks/deliveries` query. */
export interface DeliveriesQuery {
  readonly state: 'dead' | 'pending' | 'delivered';
  readonly limit: number;
  readonly before?: string;
}

/** The query's parameters, as the Functions request has them. */
export interface QueryParams {
  get(name: string): string | null;
  keys(): Iterable<string>;
}

const QUERY_KEYS = ['state', 'limit', 'before'];

/**
 * `state` (`dead`, the default, `pending` or `delivered`), `limit` (1 to 100, default 50), `before` (a delivery id:
 * the page after the previous one's last id).
 * @throws AppError `validation_failed` naming every bad or unknown parameter.
 */
export function parseDeliveriesQuery(q: QueryParams): DeliveriesQuery {
  const errors: FieldError[] = [];
  for (const k of new Set(q.keys()))
    if (!QUERY_KEYS.includes(k)) errors.push({ path: k, message: `is not a parameter (${QUERY_KEYS.join(', ')})` });
  const get = (k: string): string | undefined => {
    const v = q.get(k);
    return v === null || v === '' ? undefined : v;
  };
  const state = get('state') ?? 'dead';
  if (state !== 'dead' && state !== 'pending' && state !== 'delivered')
    errors.push({ path: 'state', message: 'must be dead, pending or delivered' });
  const limitRaw = get('limit') ?? '50';
  const limit = /^\d{1,3}$/.test(limitRaw) ? Number(limitRaw) : NaN;
  if (!(limit >= 1 && limit <= 100)) errors.push({ path: 'limit', message: 'must be an integer from 1 to 100' });
  const before = get('before');
  if (before !== undefined && !ID.test(before)) errors.push({ path: 'before', message: 'must be a delivery id' });
  if (errors.length > 0)
    throw new AppError('validation_failed', `${errors.length} invalid query parameter(s).`, { errors });
  return { state: state as DeliveriesQuery['state'], limit, ...(before === undefined ? {} : { before }) };
}
