/**
 * The lists as people change them from the console (docs/console.md): the lists the active ruleset declares with
 * their entry counts, their entries page by page (analysts and leads), and adds and removes by a lead, each with a
 * reason that its audit entry keeps. The values travel in bodies, never in a URL (request logs keep URLs), and are
 * never logged. The admin routes (`/api/lists/{name}…`, function key) are functions/lists-admin.ts.
 * @module
 */
import { z } from 'zod';
import { freeText } from '../domain/text';
import type { ListPage } from '../decisioning/list-store';
import { parseAddBody, REMOVE_VALUE } from '../decisioning/list-values';
import type { ListKeyField } from '../decisioning/ruleset-schema';
import { AppError, toAppError, type FieldError } from '../errors/errors';
import { inputFieldErrorsOf } from '../errors/field-errors';
import type { Audit, ListsAdmin } from './audit';

/** Headers, as the adapters pass them. */
type Headers = { get(name: string): string | null };

/** Longest reason, characters. */
export const MAX_REASON = 500;

/** The lists path of the active ruleset (lib/decisioning's `Decisioning`). */
export interface DeclaredLists extends ListsAdmin {
  readonly ruleset:
    { readonly name: string; readonly version: string; readonly lists: ReadonlyMap<string, ListKeyField> } | undefined;
  listKey(name: string): ListKeyField;
  listPage(name: string, cursor: string | undefined): Promise<ListPage>;
  readonly lookup: { readonly store: { count(name: string): Promise<number> } };
}

/** One declared list: its name, the event field its values are, and how many entries it holds. */
export interface ListSummary {
  readonly name: string;
  readonly key: ListKeyField;
  readonly entries: number;
}

const reason = freeText({ min: 1, max: MAX_REASON });
const removeSchema = z.strictObject(
  { ...REMOVE_VALUE, reason },
  { error: 'must be an object like { "value": "...", "reason": "..." }' },
);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const invalid = (errors: FieldError[]): AppError =>
  new AppError('validation_failed', `${errors.length} invalid field(s).`, { errors });

/**
 * An add's body `{ values, ttlSeconds?, reason }` for a list keyed by `key`.
 * @returns the reason and the body the lists path takes (`{ values, ttlSeconds? }`).
 * @throws AppError `validation_failed` naming every bad field (each bad value by its index).
 */
export function parseAddWithReason(key: ListKeyField, body: unknown): { reason: string; add: unknown } {
  const { reason: why, ...add } = isRecord(body) ? body : { reason: undefined };
  const errors: FieldError[] = [];
  const r = reason.safeParse(why);
  if (!r.success)
    errors.push({ path: 'reason', message: why === undefined ? 'is required' : 'must be 1 to 500 characters of text' });
  try {
    parseAddBody(key, isRecord(body) ? add : body);
  } catch (e) {
    errors.push(...(toAppError(e).errors ?? []));
  }
  if (errors.length > 0 || !r.success) throw invalid(errors);
  return { reason: r.data, add };
}

/**
 * A remove's body `{ value, reason }`.
 * @throws AppError `validation_failed` naming every bad field.
 */
export function parseRemoveWithReason(body: unknown): { value: string; reason: string } {
  const r = removeSchema.safeParse(body);
  if (!r.success) throw invalid(inputFieldErrorsOf(r.error.issues, body));
  return r.data;
}

/** The people routes' lists: reads for analysts and leads, changes for leads, audited with their reason. */
export class ListChanges {
  constructor(
    private readonly lists: DeclaredLists,
    private readonly audit: Audit,
  ) {}

  /** `GET /api/lists`: the declared lists, by name, with their entry counts. */
  async names(headers: Headers): Promise<{ ruleset: { name: string; version: string } | null; lists: ListSummary[] }> {
    this.audit.identity.require(headers, ['analyst', 'lead']);
    const rs = this.lists.ruleset;
    if (rs === undefined) return { ruleset: null, lists: [] };
    const declared = [...rs.lists].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const counts = await Promise.all(declared.map(([name]) => this.lists.lookup.store.count(name)));
    return {
      ruleset: { name: rs.name, version: rs.version },
      lists: declared.map(([name, key], i) => ({ name, key, entries: counts[i] ?? 0 })),
    };
  }

  /** `GET /api/list-entries/{name}?cursor=`: one page (at most 100 entries, value order) and the next cursor. */
  async page(headers: Headers, name: string, cursor: string | undefined): Promise<ListPage> {
    this.audit.identity.require(headers, ['analyst', 'lead']);
    return this.lists.listPage(name, cursor);
  }

  /** `POST /api/list-entries/{name}` `{ values, ttlSeconds?, reason }`: a lead adds; audited with the reason. */
  async add(headers: Headers, name: string, body: unknown): Promise<unknown> {
    const actor = this.audit.identity.require(headers, ['lead']).name;
    const { reason: why, add } = parseAddWithReason(this.lists.listKey(name), body);
    return this.audit.lists(this.lists, actor, why).addToList(name, add);
  }

  /** `POST /api/list-entries/{name}/remove` `{ value, reason }`: a lead removes; audited with the reason. */
  async remove(headers: Headers, name: string, body: unknown): Promise<unknown> {
    const actor = this.audit.identity.require(headers, ['lead']).name;
    this.lists.listKey(name);
    const { value, reason: why } = parseRemoveWithReason(body);
    return this.audit.lists(this.lists, actor, why).removeFromList(name, value);
  }
}
