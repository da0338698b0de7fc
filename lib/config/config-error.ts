import type { z } from 'zod';
import { AppError, type FieldError } from '../errors/errors';
import { fieldErrorsOf } from '../errors/field-errors';

/**
 * The `config_invalid` error for a failed settings parse: names every bad setting and why, never its value
 * (settings may hold secrets).
 */
export function configInvalid(error: z.ZodError): AppError {
  return configInvalidFields(fieldErrorsOf(error.issues));
}

/** The `config_invalid` error naming each of `errors` (settings that are inconsistent with each other). */
export function configInvalidFields(errors: readonly FieldError[]): AppError {
  return new AppError(
    'config_invalid',
    `Invalid settings: ${errors.map((e) => `${e.path} (${e.message})`).join('; ')}`,
    { errors: [...errors] },
  );
}
