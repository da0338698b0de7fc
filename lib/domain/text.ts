/**
 * Text hygiene, in one place: which characters a string from a client may hold. Every request body, query
 * parameter and message is checked with it (the zod builders for schemas, {@link textProblem} and
 * {@link checkText} for hand-written parsers, {@link deepTextErrors} for documents), so a bad byte is a 400
 * naming the field, never a store's failure later (PostgreSQL refuses NUL; a lone surrogate is not UTF-8).
 *
 * Refused everywhere: NUL and the other C0 controls, DEL, the C1 controls (U+0080–U+009F) and unpaired
 * surrogates (U+D800–U+DFFF not in a pair). Free text (notes, reasons, comments, descriptions) may hold tab,
 * CR and LF; identifiers (ids, keys, names, everything else) may not. Messages name the code point and its
 * index, never the value (it may be payment data).
 * @module
 */
import { z } from 'zod';
import type { FieldError } from '../errors/errors';

/** `identifier`: ids, keys, names (no tab, CR, LF); `freeText`: notes, reasons, comments (tab, CR, LF allowed). */
export type TextKind = 'identifier' | 'freeText';

const hex = (c: number): string => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Why `s` may not be accepted as `kind`, or `undefined` when it may. One pass over the char codes; no
 * allocation unless it finds a bad character.
 */
export function textProblem(s: string, kind: TextKind): string | undefined {
  const freeText = kind === 'freeText';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) continue; // printable ASCII: the common case
    if (c < 0x20) {
      if (freeText && (c === 0x09 || c === 0x0a || c === 0x0d)) continue;
      return `must not contain control character ${hex(c)}${c === 0 ? ' (NUL)' : ''} (index ${i})`;
    }
    if (c <= 0x9f) return `must not contain control character ${hex(c)} (index ${i})`; // DEL and C1
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff) {
      const next = s.charCodeAt(i + 1); // NaN past the end
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    return `must not contain an unpaired surrogate ${hex(c)} (index ${i})`;
  }
  return undefined;
}

/**
 * Checks `value` (a string) as `kind`; on a problem, pushes `{ path, message }` onto `errors`.
 * @returns whether it was clean.
 */
export function checkText(value: string, path: string, kind: TextKind, errors: FieldError[]): boolean {
  const problem = textProblem(value, kind);
  if (problem === undefined) return true;
  errors.push({ path, message: problem });
  return false;
}

function refinement(kind: TextKind) {
  return (value: string, ctx: z.RefinementCtx): void => {
    const problem = textProblem(value, kind);
    // not continued: the checks after it (length, pattern) do not add a second error for the same field
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem, input: value, continue: false });
  };
}

/**
 * A string schema that refuses the characters `kind` may not hold (the first check: chain `.min`, `.regex`…
 * after it, they then report nothing more for a refused string).
 * @param error the message when the value is not a string.
 */
export function textString(kind: TextKind, error?: string): z.ZodString {
  return z.string(error === undefined ? undefined : { error }).superRefine(refinement(kind));
}

/** Bounds of a string schema, characters. */
export interface TextBounds {
  readonly min?: number;
  readonly max?: number;
}

/** An identifier (id, key, name): 1 to 128 characters by default, none of them refused ({@link textProblem}). */
export function identifierString(bounds: TextBounds = {}): z.ZodString {
  return textString('identifier')
    .min(bounds.min ?? 1)
    .max(bounds.max ?? 128);
}

/** Free text (a note, a reason, a comment): at most `max` characters (default 4000); tab, CR and LF allowed. */
export function freeText(bounds: TextBounds = {}): z.ZodString {
  return textString('freeText')
    .min(bounds.min ?? 0)
    .max(bounds.max ?? 4000);
}

/**
 * Every refused character in a JSON document (a ruleset, …): object keys are identifiers, string values free
 * text. Iterative (a deeply nested body cannot overflow the stack); at most `maxErrors` errors.
 * @param prefix path of the document itself ('' for a whole body).
 */
export function deepTextErrors(value: unknown, prefix = '', maxErrors = 20): FieldError[] {
  const errors: FieldError[] = [];
  const join = (p: string, k: string | number): string => (p === '' ? String(k) : `${p}.${k}`);
  // [value, its path, its key when it is an object's member (checked when it is reached: document order)]
  const stack: [unknown, string, string?][] = [[value, prefix]];
  while (stack.length > 0 && errors.length < maxErrors) {
    const [v, path, key] = stack.pop() as [unknown, string, string?];
    if (key !== undefined && !checkText(key, path, 'identifier', errors)) continue;
    if (typeof v === 'string') checkText(v, path, 'freeText', errors);
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], join(path, i)]);
    else if (typeof v === 'object' && v !== null)
      for (const [k, x] of Object.entries(v).reverse()) stack.push([x, join(path, k), k]);
  }
  return errors.slice(0, maxErrors);
}
