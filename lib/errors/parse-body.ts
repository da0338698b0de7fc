/** Parses a request body with a zod schema, or throws the one `validation_failed` problem naming every bad field. */
import type { z } from 'zod';
import { AppError } from './errors';
import { fieldErrorsOf } from './field-errors';

/**
 * @returns the parsed body.
 * @throws AppError `validation_failed` whose `errors` name each invalid field (`a.b`) and each unknown one.
 */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const errors = fieldErrorsOf(r.error.issues);
  throw new AppError('validation_failed', `${errors.length} invalid field(s).`, { errors });
}
