/**
 * The query of `GET /api/audit?kind=&name=&actor=&from=&to=&cursor=&limit=` → an {@link AuditQuery}, and the page
 * cursor (opaque: base64url of the last entry's time and id). Pure. Empty parameters count as absent; unknown ones are
 * ignored; a control character or lone surrogate in `name` or `actor` is refused (lib/domain/text.ts).
 * @module
 */
import { checkText } from '../domain/text';
import { AppError, type FieldError } from '../errors/errors';
import { cursorCodec } from '../platform/cursor';
import type { AuditKind, AuditQuery } from './audit-log';

/** The kinds an entry can have. */
export const AUDIT_KINDS: readonly AuditKind[] = ['ruleset', 'list', 'model', 'case', 'signals', 'webhook'];

/** Page size when `limit` is absent. */
export const AUDIT_DEFAULT_LIMIT = 50;
/** Largest page. */
export const AUDIT_MAX_LIMIT = 200;
/** Longest `name` or `actor` filter, characters. */
const MAX_FILTER_CHARS = 256;
/** Longest cursor accepted, characters. */
const MAX_CURSOR_CHARS = 200;

/** Where a page ends: the last entry's time (epoch ms) and id. */
export interface AuditCursor {
  readonly at: number;
  readonly id: string;
}

/** The audit's page cursors: the platform's codec over `[at, id]`. */
const AUDIT_CURSORS = cursorCodec({ maxChars: MAX_CURSOR_CHARS });

/** The cursor after the entry at `at` (epoch ms) with `id`. */
export function encodeAuditCursor(c: AuditCursor): string {
  return AUDIT_CURSORS.encode([c.at, c.id]);
}

/** A cursor's position, or `undefined` when it is not one {@link encodeAuditCursor} made. */
export function decodeAuditCursor(s: string): AuditCursor | undefined {
  return AUDIT_CURSORS.decode(s, (v) => {
    if (!Array.isArray(v) || v.length !== 2) return undefined;
    const [at, id] = v as unknown[];
    if (typeof at !== 'number' || !Number.isSafeInteger(at) || !isTime(at)) return undefined;
    if (typeof id !== 'string' || !/^[1-9][0-9]{0,18}$/.test(id)) return undefined;
    return { at, id };
  });
}

/** Years 1970 to 9999 (what `Date` and `TIMESTAMPTZ` both hold). */
function isTime(ms: number): boolean {
  return ms >= 0 && ms <= 253_402_300_799_999;
}

/** `from`/`to`: an ISO 8601 date-time (with its offset) or epoch milliseconds. */
function parseTime(s: string): number | undefined {
  if (/^[0-9]{1,15}$/.test(s)) {
    const n = Number(s);
    return isTime(n) ? n : undefined;
  }
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(s)) return undefined;
  const n = Date.parse(s);
  return Number.isNaN(n) || !isTime(n) ? undefined : n;
}

/** Query parameters, as the Functions `HttpRequest` has them. */
export interface QueryLookup {
  get(name: string): string | null;
}

/**
 * Parses the audit query.
 * @throws AppError `validation_failed` naming every bad parameter.
 */
export function parseAuditQuery(query: QueryLookup): AuditQuery {
  const errors: FieldError[] = [];
  const get = (k: string): string | undefined => {
    const v = query.get(k);
    return v === null || v === '' ? undefined : v;
  };
  const out: { -readonly [K in keyof AuditQuery]: AuditQuery[K] } = { limit: AUDIT_DEFAULT_LIMIT };
  const kind = get('kind');
  if (kind !== undefined) {
    if ((AUDIT_KINDS as readonly string[]).includes(kind)) out.kind = kind as AuditKind;
    else errors.push({ path: 'kind', message: `must be one of ${AUDIT_KINDS.join(', ')}` });
  }
  for (const k of ['name', 'actor'] as const) {
    const v = get(k);
    if (v === undefined) continue;
    if (v.length > MAX_FILTER_CHARS)
      errors.push({ path: k, message: `must be at most ${MAX_FILTER_CHARS} characters` });
    else if (checkText(v, k, 'identifier', errors)) out[k] = v;
  }
  for (const k of ['from', 'to'] as const) {
    const v = get(k);
    if (v === undefined) continue;
    const t = parseTime(v);
    if (t !== undefined) out[k] = t;
    else errors.push({ path: k, message: 'must be an ISO 8601 date-time with its offset, or epoch milliseconds' });
  }
  if (out.from !== undefined && out.to !== undefined && out.from >= out.to)
    errors.push({ path: 'to', message: 'must be after from' });
  const cursor = get('cursor');
  if (cursor !== undefined) {
    if (decodeAuditCursor(cursor) !== undefined) out.cursor = cursor;
    else errors.push({ path: 'cursor', message: 'must be a cursor a previous page returned' });
  }
  const limit = get('limit');
  if (limit !== undefined) {
    const n = /^[0-9]{1,4}$/.test(limit) ? Number(limit) : Number.NaN;
    if (n >= 1 && n <= AUDIT_MAX_LIMIT) out.limit = n;
    else errors.push({ path: 'limit', message: `must be an integer from 1 to ${AUDIT_MAX_LIMIT}` });
  }
  if (errors.length > 0)
    throw new AppError('validation_failed', `${errors.length} invalid field${errors.length === 1 ? '' : 's'}.`, {
      errors,
    });
  return out;
}
