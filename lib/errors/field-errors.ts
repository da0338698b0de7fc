/**
 * From zod issues to the {@link FieldError}s a problem names: the one mapping every validating module uses, so
 * an unknown field, a bad field and a missing one read the same everywhere.
 */
import type { z } from 'zod';
import type { FieldError } from './errors';

/** One zod issue, as `safeParse` reports it. */
type ZodIssue = z.core.$ZodIssue;

/** `prefix.a.b`: the segments as they are (an unknown key may be ''), under `prefix` unless it is ''. */
function joinPath(prefix: string, segments: readonly PropertyKey[]): string {
  const rel = segments.map(String);
  return (prefix === '' ? rel : [prefix, ...rel]).join('.');
}

/**
 * One error per issue, in zod's order: `{ path: 'a.b', message }`; an `unrecognized_keys` issue gives one
 * `unknown field` error per key, each by its full path (`a.b.extra`).
 * @param prefix path prefix for every field (e.g. `labels.3`); default none.
 */
export function fieldErrorsOf(issues: readonly ZodIssue[], prefix = ''): FieldError[] {
  return issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((key) => ({ path: joinPath(prefix, [...i.path, key]), message: 'unknown field' }))
      : [{ path: joinPath(prefix, i.path), message: i.message }],
  );
}

function isMissing(input: unknown, key: PropertyKey | undefined): boolean {
  return (
    key !== undefined &&
    typeof input === 'object' &&
    input !== null &&
    !Array.isArray(input) &&
    (input as Record<PropertyKey, unknown>)[key] === undefined
  );
}

/**
 * {@link fieldErrorsOf} for what a client sent: one error per field (the first zod reports), and a top-level
 * field absent from `input` (a wrong type or value at a missing key) says `is required`.
 * @param input the value that was parsed.
 * @param prefix path prefix for every field (e.g. `events.3`); default none.
 */
export function inputFieldErrorsOf(issues: readonly ZodIssue[], input: unknown, prefix = ''): FieldError[] {
  const out = new Map<string, FieldError>();
  for (const issue of issues) {
    const missing =
      (issue.code === 'invalid_type' || issue.code === 'invalid_value') &&
      issue.path.length === 1 &&
      isMissing(input, issue.path[0]);
    for (const e of fieldErrorsOf([issue], prefix))
      if (!out.has(e.path)) out.set(e.path, missing ? { path: e.path, message: 'is required' } : e);
  }
  return [...out.values()];
}
