/**
 * The bodies of the draft routes, checked strictly as every body is (an unknown field is named): the backtest
 * window `{ from, to }`, the `{ comment? }` of submit, approve and reject, the text of a drafted document, and a
 * version from the route. Pure.
 * @module
 */
import { z } from 'zod';
import { deepTextErrors, freeText, textProblem } from '../domain/text';
import { AppError, type FieldError } from '../errors/errors';
import { inputFieldErrorsOf } from '../errors/field-errors';

/** Longest backtest window, days. */
export const MAX_WINDOW_DAYS = 92;
/** Longest comment, characters. */
const MAX_COMMENT = 500;

const invalid = (detail: string, errors: FieldError[]): AppError =>
  new AppError('validation_failed', detail, { errors });

const time = z
  .string({ error: 'must be an ISO 8601 date-time' })
  .regex(/^\d{4}-\d{2}-\d{2}T/, { error: 'must be an ISO 8601 date-time' })
  .refine((v) => !Number.isNaN(Date.parse(v)), { error: 'must be an ISO 8601 date-time' });
const windowSchema = z.strictObject(
  { from: time, to: time },
  { error: 'must be an object like { "from": "2026-11-01T00:00:00Z", "to": "2026-12-01T00:00:00Z" }' },
);

/**
 * `{ from, to }`: ISO 8601 date-times, `from < to`, at most {@link MAX_WINDOW_DAYS} apart; no other field.
 * @throws AppError `validation_failed` naming every bad field.
 */
export function parseWindow(body: unknown): { fromMs: number; toMs: number } {
  const r = windowSchema.safeParse(body);
  if (!r.success) throw invalid('The backtest window is not valid.', inputFieldErrorsOf(r.error.issues, body));
  const fromMs = Date.parse(r.data.from);
  const toMs = Date.parse(r.data.to);
  const errors: FieldError[] = [];
  if (!(fromMs < toMs)) errors.push({ path: 'to', message: 'must be after from' });
  else if (toMs - fromMs > MAX_WINDOW_DAYS * 86_400_000)
    errors.push({ path: 'to', message: `must be at most ${MAX_WINDOW_DAYS} days after from` });
  if (errors.length > 0) throw invalid('The backtest window is not valid.', errors);
  return { fromMs, toMs };
}

const commentSchema = z.strictObject(
  {
    comment: freeText({ max: MAX_COMMENT }).nullable().optional(),
  },
  { error: 'must be an object like { "comment": "..." }' },
);

/**
 * `{ comment? }` (or `null`, no body to speak of): free text of at most 500 characters; no other field.
 * @returns the comment; `undefined` when absent, null or empty.
 * @throws AppError `validation_failed` naming every bad field.
 */
export function parseComment(body: unknown): string | undefined {
  const r = commentSchema.safeParse(body ?? {});
  if (!r.success) throw invalid('The comment is not valid.', inputFieldErrorsOf(r.error.issues, body));
  const c = r.data.comment;
  return c === undefined || c === null || c === '' ? undefined : c;
}

/**
 * A drafted ruleset document (any JSON): every key an identifier, every string free of refused characters.
 * @throws AppError `validation_failed` naming each bad string by its path (at most 20).
 */
export function checkDocumentText(document: unknown): void {
  const errors = deepTextErrors(document);
  if (errors.length > 0) throw invalid(`${errors.length} invalid field(s).`, errors);
}

/**
 * A version from the route (`…/drafts/{version}`): refused characters are a 400 naming `version`, before any
 * store sees it.
 */
export function checkRouteVersion(version: string): void {
  const problem = textProblem(version, 'identifier');
  if (problem !== undefined) throw invalid('The version is not valid.', [{ path: 'version', message: problem }]);
}
