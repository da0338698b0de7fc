import { AppError } from '../errors/errors';

/** A message body as text (a Buffer as UTF-8; an already-parsed value as JSON). */
export function bodyText(message: unknown): string {
  if (Buffer.isBuffer(message)) return message.toString('utf8');
  if (typeof message === 'string') return message;
  return JSON.stringify(message) ?? String(message);
}

/**
 * The JSON value of a message body: text and bytes are parsed; values the trigger already parsed are kept.
 * @throws AppError `invalid_json` (not transient) for a body that is not JSON.
 */
export function decodeBody(message: unknown): unknown {
  if (Buffer.isBuffer(message) || typeof message === 'string') {
    try {
      return JSON.parse(bodyText(message)) as unknown;
    } catch {
      throw new AppError('invalid_json', 'The message body is not valid JSON.', {
        transient: false,
        errors: [{ path: '', message: 'malformed JSON' }],
      });
    }
  }
  return message;
}
