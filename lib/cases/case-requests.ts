/**
 * Validation of the case API's inputs: the list query (with its opaque cursor), the filters of take next, the
 * analytics range, the case id, and the bodies of notes, verdicts and reassignments. Every invalid field is named (`validation_failed`), never a throw of another kind;
 * control characters and lone surrogates are refused in every string (lib/domain/text.ts; the query's `rule`,
 * `merchantId` and `queue` and the list name allow printable ASCII only).
 */
import { z } from 'zod';
import { ttlSecondsSchema } from '../decisioning/list-values';
import { freeText, identifierString } from '../domain/text';
import { AppError, type FieldError } from '../errors/errors';
import { parseWithSchema, queryNameErrors, type QueryParams } from '../http/contract';
import { cursorCodec } from '../platform/cursor';
import {
  CASE_STATES,
  type CaseFilter,
  type CasePosition,
  type CaseState,
  type NextFilter,
  type Verdict,
} from './case-store';

export { queryNameErrors, type QueryParams };

/**
 * The parameters `GET /api/cases` reads; any other is refused, naming it. The ids of the search (`transactionId`,
 * `userId`) are not among them: ids never travel in a URL (request logs keep URLs), they go in the body of
 * `POST /api/cases/search` ({@link CASE_SEARCH_PARAMS}).
 */
export const CASE_LIST_PARAMS: readonly string[] = [
  'status',
  'queue',
  'rule',
  'merchantId',
  'minScore',
  'assignee',
  'olderThan',
  'order',
  'cursor',
];

/** The fields of the body of `POST /api/cases/search`: the list's parameters and the ids it searches by. */
export const CASE_SEARCH_PARAMS: readonly string[] = [...CASE_LIST_PARAMS, 'transactionId', 'userId'];

/** The parameters `POST /api/cases/next` reads (the list's filters that fit an open, unassigned case). */
export const CASE_NEXT_PARAMS: readonly string[] = ['queue', 'rule', 'merchantId', 'minScore'];

/** The parameters `GET /api/cases/analytics` reads. */
export const CASE_ANALYTICS_PARAMS: readonly string[] = ['from', 'to'];

/** A parsed `GET /api/cases` query. */
export interface CaseListQuery {
  /** `assignee` is as given: `me` is resolved to the caller by the service. */
  readonly filter: CaseFilter;
  readonly order: 'oldest' | 'newest';
  readonly after?: CasePosition;
}

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const ID = /^[1-9]\d{0,17}$/;
const TEXT_ID = /^[\w.:@-]{1,128}$/;

/** The list's page cursors: the platform's codec (base64url of the position's JSON, its own spelling only). */
const CASE_CURSORS = cursorCodec();

/** The opaque cursor of a position. */
export function encodeCaseCursor(p: CasePosition, order: 'oldest' | 'newest'): string {
  return CASE_CURSORS.encode({ d: p.decidedAt, i: p.id, o: order });
}

function decodeCaseCursor(cursor: string, order: 'oldest' | 'newest'): CasePosition | undefined {
  return CASE_CURSORS.decode(cursor, (v) => {
    if (typeof v !== 'object' || v === null) return undefined;
    const { d, i, o } = v as Record<string, unknown>;
    if (typeof d !== 'string' || !ISO_WITH_ZONE.test(d) || !Number.isFinite(Date.parse(d))) return undefined;
    if (typeof i !== 'string' || !ID.test(i) || o !== order) return undefined;
    return { decidedAt: d, id: i };
  });
}

/**
 * The body of `POST /api/cases/search` (a JSON object of string fields, {@link CASE_SEARCH_PARAMS}) as the list's
 * parameters. @throws AppError `validation_failed` naming every field that is not a string.
 */
export function searchParams(body: unknown): QueryParams {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AppError('validation_failed', 'The search must be a JSON object.', {
      errors: [{ path: '', message: 'must be an object' }],
    });
  const entries = Object.entries(body as Record<string, unknown>);
  const errors = entries
    .filter(([, v]) => typeof v !== 'string')
    .map(([k]) => ({ path: k, message: 'must be a string' }));
  if (errors.length > 0)
    throw new AppError('validation_failed', `Invalid search: ${errors.map((e) => e.path).join(', ')}.`, { errors });
  const map = new Map(entries as [string, string][]);
  return { get: (k) => map.get(k) ?? null, keys: () => map.keys() };
}

/** A query's value, an empty one counting as absent. */
function getter(q: QueryParams): (k: string) => string | undefined {
  return (k) => {
    const v = q.get(k);
    return v === null || v === '' ? undefined : v;
  };
}

const assigneeSchema = identifierString({ max: 256 });
/** A payment's `transactionId` or `userId`, as the payment event reads them. */
const paymentIdSchema = identifierString({ max: 128 });

/** The filters `next` and the list share: `queue`, `rule`, `merchantId`, `minScore`; errors pushed to `errors`. */
function parseNextFilter(get: (k: string) => string | undefined, errors: FieldError[]): NextFilter {
  const filter: { -readonly [K in keyof NextFilter]: NextFilter[K] } = {};
  for (const k of ['queue', 'rule', 'merchantId'] as const) {
    const v = get(k);
    if (v === undefined) continue;
    if (TEXT_ID.test(v)) filter[k] = v;
    else errors.push({ path: k, message: 'must be 1 to 128 letters, digits or . : @ - _' });
  }
  const minScore = get('minScore');
  if (minScore !== undefined) {
    const n = Number(minScore);
    if (/^\s*$/.test(minScore) || !Number.isFinite(n) || n < 0 || n > 1)
      errors.push({ path: 'minScore', message: 'must be a number in [0, 1]' });
    else filter.minScore = n;
  }
  return filter;
}

/** An ISO 8601 date-time with a zone, ms; `undefined` (and an error naming `path`) when it is not one. */
function instant(v: string, path: string, errors: FieldError[]): number | undefined {
  const t = Date.parse(v);
  if (ISO_WITH_ZONE.test(v) && Number.isFinite(t)) return t;
  errors.push({ path, message: 'must be an ISO 8601 date-time with a zone (Z or ±hh:mm)' });
  return undefined;
}

function refuse(errors: readonly FieldError[]): AppError {
  return new AppError('validation_failed', `${errors.length} invalid query parameter(s).`, { errors });
}

/**
 * Parses `status`, `queue`, `rule`, `merchantId`, `minScore`, `assignee` (`me`, or an actor's name), `olderThan` (an
 * ISO 8601 date-time: cases decided before it), `order` (`newest`, the default, or `oldest`), `cursor`, and
 * `transactionId` / `userId` (exact match, ids as a payment has them: the console's search). An empty value counts as
 * absent.
 * @throws AppError `validation_failed` naming every bad parameter (a cursor this endpoint did not return: `cursor`),
 *   every parameter it does not read and every parameter given more than once.
 */
export function parseCaseListQuery(q: QueryParams, known: readonly string[] = CASE_LIST_PARAMS): CaseListQuery {
  const errors: FieldError[] = queryNameErrors(q, known);
  const get = getter(q);
  const filter: { -readonly [K in keyof CaseFilter]: CaseFilter[K] } = {};
  const status = get('status');
  if (status !== undefined) {
    if ((CASE_STATES as readonly string[]).includes(status)) filter.status = status as CaseState;
    else errors.push({ path: 'status', message: `must be one of ${CASE_STATES.join(', ')}` });
  }
  Object.assign(filter, parseNextFilter(get, errors));
  const assignee = get('assignee');
  if (assignee !== undefined) {
    if (assigneeSchema.safeParse(assignee).success) filter.assignee = assignee;
    else errors.push({ path: 'assignee', message: "must be me or an actor's name (1 to 256 characters)" });
  }
  for (const k of ['transactionId', 'userId'] as const) {
    const v = get(k);
    if (v === undefined) continue;
    if (paymentIdSchema.safeParse(v).success) filter[k] = v;
    else errors.push({ path: k, message: 'must be an id as a payment has it (1 to 128 characters)' });
  }
  const olderThan = get('olderThan');
  if (olderThan !== undefined) {
    const t = instant(olderThan, 'olderThan', errors);
    if (t !== undefined) filter.decidedBefore = t;
  }
  const orderRaw = get('order') ?? 'newest';
  const order = orderRaw === 'oldest' || orderRaw === 'newest' ? orderRaw : undefined;
  if (order === undefined) errors.push({ path: 'order', message: 'must be oldest or newest' });
  const cursor = get('cursor');
  const after = cursor === undefined || order === undefined ? undefined : decodeCaseCursor(cursor, order);
  if (cursor !== undefined && order !== undefined && after === undefined)
    errors.push({
      path: 'cursor',
      message: 'is not a cursor this endpoint returned for this order (pass the `cursor` of the previous page)',
    });
  if (errors.length > 0 || order === undefined) throw refuse(errors);
  return { filter, order, ...(after === undefined ? {} : { after }) };
}

/**
 * Parses the filters of `POST /api/cases/next`: `queue`, `rule`, `merchantId`, `minScore` (as the list reads them).
 * @throws AppError `validation_failed` naming every bad, unknown or repeated parameter.
 */
export function parseNextQuery(q: QueryParams): NextFilter {
  const errors: FieldError[] = queryNameErrors(q, CASE_NEXT_PARAMS);
  const filter = parseNextFilter(getter(q), errors);
  if (errors.length > 0) throw refuse(errors);
  return filter;
}

/** The longest analytics range, ms (366 days), and the default one (the last 7 days). */
export const ANALYTICS_MAX_RANGE_MS = 366 * 86_400_000;
const ANALYTICS_DEFAULT_RANGE_MS = 7 * 86_400_000;

/**
 * Parses `from` and `to` of `GET /api/cases/analytics` (ISO 8601 date-times with a zone; cases closed in
 * [from, to)); `to` defaults to `now`, `from` to 7 days before `to`. `from` must be before `to`, at most 366 days.
 * @throws AppError `validation_failed` naming every bad, unknown or repeated parameter.
 */
export function parseAnalyticsQuery(q: QueryParams, now: number): { from: number; to: number } {
  const errors: FieldError[] = queryNameErrors(q, CASE_ANALYTICS_PARAMS);
  const get = getter(q);
  const fromRaw = get('from');
  const toRaw = get('to');
  const to = toRaw === undefined ? now : instant(toRaw, 'to', errors);
  const from =
    fromRaw === undefined
      ? to === undefined
        ? undefined
        : to - ANALYTICS_DEFAULT_RANGE_MS
      : instant(fromRaw, 'from', errors);
  if (from !== undefined && to !== undefined) {
    if (from >= to) errors.push({ path: 'from', message: 'must be before to' });
    else if (to - from > ANALYTICS_MAX_RANGE_MS)
      errors.push({ path: 'from', message: 'must be at most 366 days before to' });
  }
  if (errors.length > 0 || from === undefined || to === undefined) throw refuse(errors);
  return { from, to };
}

/**
 * A case id from the route.
 * @throws AppError `not_found` for anything that is not a case id.
 */
export function parseCaseId(id: string | undefined): string {
  if (id === undefined || !ID.test(id)) throw new AppError('not_found', 'No such case.');
  return id;
}

/** The body of `POST /api/cases/{id}/notes` (lib/contracts/cases.ts declares the route with it). */
export const noteSchema = z.strictObject({ text: freeText({ max: 4000 }).trim().min(1) });
/** The body of `POST /api/cases/{id}/verdict`. */
export const verdictSchema = z.strictObject({
  verdict: z.enum(['fraud', 'legit'], { error: 'must be fraud or legit' }),
  reason: freeText({ max: 1000 }).optional(),
  addToList: z
    .strictObject({
      list: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, { error: 'must be a list name like blocked_users' }),
      ttlSeconds: ttlSecondsSchema.optional(),
    })
    .optional(),
});
/** The body of `POST /api/cases/{id}/assign`. */
export const assignSchema = z.strictObject({ assignee: identifierString({ max: 256 }).trim().min(1) });

/** A `POST /api/cases/{id}/verdict` body. */
export interface VerdictBody {
  readonly verdict: Verdict;
  readonly reason?: string;
  readonly addToList?: { readonly list: string; readonly ttlSeconds?: number };
}

/** @throws AppError `validation_failed` naming every bad field. */
export function parseNoteBody(body: unknown): { text: string } {
  return parseWithSchema(noteSchema, body);
}

/** @throws AppError `validation_failed` naming every bad field. */
export function parseVerdictBody(body: unknown): VerdictBody {
  return parseWithSchema(verdictSchema, body) as VerdictBody;
}

/** @throws AppError `validation_failed` naming every bad field. */
export function parseAssignBody(body: unknown): { assignee: string } {
  return parseWithSchema(assignSchema, body);
}
