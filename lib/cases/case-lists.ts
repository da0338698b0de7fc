/**
 * The lists a case's verdict may add to (`addToList`, leads only): the active ruleset's declared lists, offered by
 * name with the payment field each is keyed by, and the list addition a verdict writes to the case outbox.
 * @module
 */
import { AppError } from '../errors/errors';
import type { OutboxListAddition } from './case-outbox';
import type { Case } from './case-store';

/** The lists path, as a verdict's `addToList` uses it (the active ruleset's lists; lib/decisioning). */
export interface CaseLists {
  /** The event field a list is keyed by. @throws AppError `not_found` for a list the ruleset does not declare. */
  listKey(name: string): string;
  addToList(name: string, body: unknown): Promise<unknown>;
  /** The active ruleset: the lists it declares, by name, with the event field each is keyed by. */
  readonly ruleset?: { readonly lists: ReadonlyMap<string, string> } | undefined;
}

/** A list a lead may add a case's value to: its name and the payment field it is keyed by. */
export interface CaseListOption {
  readonly name: string;
  readonly key: string;
}

/** The lists the active ruleset declares, by name (none without lists or a ruleset). */
export function listOptions(lists: CaseLists | undefined): CaseListOption[] {
  const declared = lists?.ruleset?.lists;
  if (declared === undefined) return [];
  return [...declared]
    .map(([name, key]) => ({ name, key }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The list addition of a verdict's `addToList` for case `c`. @throws AppError `not_found`, `validation_failed`. */
export function listAddition(
  lists: CaseLists | undefined,
  a: { readonly list: string; readonly ttlSeconds?: number },
  c: Case,
): OutboxListAddition {
  if (lists === undefined) throw new AppError('not_found', 'No ruleset is configured: no lists.');
  const key = lists.listKey(a.list);
  const value = (c.payment as unknown as Record<string, unknown>)[key];
  if (typeof value !== 'string' || value === '')
    throw new AppError('validation_failed', '1 invalid field.', {
      errors: [{ path: 'addToList.list', message: `the case's payment has no ${key} to add` }],
    });
  return { list: a.list, values: [value], ...(a.ttlSeconds === undefined ? {} : { ttlSeconds: a.ttlSeconds }) };
}
