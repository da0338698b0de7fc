import { AppError } from '../errors/errors';

/**
 * Parses JSON text into a value.
 * @throws AppError `invalid_json`.
 */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AppError('invalid_json', 'The body is not valid JSON.', {
      errors: [{ path: '', message: 'malformed JSON' }],
    });
  }
}
