/**
 * What a list accepts, by its key field: ids of 1–128 characters (no control character, tab, CR, LF or lone
 * surrogate: lib/domain/text.ts), ISO country codes, or card fingerprints
 * (opaque processor tokens; a 13–19 digit Luhn-valid value is a card number and refused). Messages never
 * quote the value.
 */
import { z } from 'zod';
import { AppError, type FieldError } from '../errors/errors';
import { fieldErrorsOf } from '../errors/field-errors';
import { cursorCodec } from '../platform/cursor';
import { isCardNumber } from '../domain/card-number';
import { textProblem } from '../domain/text';
import { COUNTRY_CODES } from '../domain/iso-codes';
import { MAX_VALUES_PER_ADD } from './list-store';
import type { ListKeyField } from './ruleset-schema';

/** Why `value` is not acceptable on a list keyed by `key`, or `undefined` when it is. */
export function listValueProblem(key: ListKeyField, value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (key === 'country' || key === 'ipCountry')
    return COUNTRY_CODES.has(value) ? undefined : 'must be an ISO 3166-1 alpha-2 code (e.g. FR)';
  if (value.length < 1 || value.length > 128) return 'must be 1 to 128 characters';
  const bad = textProblem(value, 'identifier');
  if (bad !== undefined) return bad;
  if (key === 'cardFingerprint' && isCardNumber(value))
    return 'looks like a card number (13-19 digits passing the Luhn check): send the processor fingerprint, never the card number';
  return undefined;
}

/** The list pages' cursors: the platform's codec over the page's last value (opaque to clients). */
const LIST_CURSORS = cursorCodec({ maxChars: 600 });

/** `?cursor=` of a list's page: after the page's last value. */
export function encodeListCursor(lastValue: string): string {
  return LIST_CURSORS.encode(lastValue);
}

/**
 * The last value a `?cursor=` stands for; `undefined` for no cursor (absent or empty).
 * @throws AppError `validation_failed` naming `cursor` when it is not one this service handed out.
 */
export function decodeListCursor(key: ListKeyField, cursor: string | undefined): string | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const value = LIST_CURSORS.decode(cursor, (v) =>
    typeof v === 'string' && listValueProblem(key, v) === undefined ? v : undefined,
  );
  if (value === undefined)
    throw new AppError('validation_failed', '1 invalid query parameter.', {
      errors: [
        { path: 'cursor', message: 'is not a cursor this endpoint returned (pass the `cursor` of the previous page)' },
      ],
    });
  return value;
}

/** A list entry's time to live, s: 1 s to 366 days (the lists path, and a case verdict's `addToList`). */
export const ttlSecondsSchema = z
  .number()
  .int()
  .min(1)
  .max(366 * 86_400);

const addBodySchema = z.strictObject({
  values: z.array(z.unknown()).min(1).max(MAX_VALUES_PER_ADD),
  ttlSeconds: ttlSecondsSchema.optional(),
});

/**
 * Validates a `POST /api/lists/{name}` body.
 * @throws AppError `validation_failed` naming each bad field, and each bad value by its index (`values.3`).
 */
export function parseAddBody(key: ListKeyField, body: unknown): { values: string[]; ttlSeconds?: number } {
  const parsed = addBodySchema.safeParse(body);
  if (!parsed.success) {
    const errors = fieldErrorsOf(parsed.error.issues);
    throw new AppError('validation_failed', `${errors.length} invalid field(s).`, { errors });
  }
  const errors: FieldError[] = [];
  parsed.data.values.forEach((v, i) => {
    const problem = listValueProblem(key, v);
    if (problem !== undefined) errors.push({ path: `values.${i}`, message: problem });
  });
  if (errors.length > 0) throw new AppError('validation_failed', `${errors.length} invalid value(s).`, { errors });
  const values = [...new Set(parsed.data.values as string[])];
  return parsed.data.ttlSeconds === undefined ? { values } : { values, ttlSeconds: parsed.data.ttlSeconds };
}

/** The entry a remove names (the admin's body; the people's adds a reason, lib/governance/list-changes.ts). */
export const REMOVE_VALUE = { value: z.string({ error: 'must be a string' }) };

const removeBodySchema = z.strictObject(REMOVE_VALUE, { error: 'must be an object like { "value": "..." }' });

/**
 * Validates a `POST /api/lists/{name}/remove` body `{ value }` (the value travels in the body: request logs keep URLs).
 * @throws AppError `validation_failed` naming each bad field.
 */
export function parseRemoveBody(body: unknown): { value: string } {
  const parsed = removeBodySchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const errors = fieldErrorsOf(parsed.error.issues);
  throw new AppError('validation_failed', `${errors.length} invalid field(s).`, { errors });
}
