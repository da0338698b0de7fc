/**
 * Opaque page cursors (`?cursor=`, `next`): the base64url of a position's JSON, read back only when it is exactly
 * what {@link CursorCodec.encode} writes for a position the caller's reader accepts. A codec made with a key also
 * signs: the keyed hash of the payload follows it, so a cursor changed anywhere is refused, not read as another
 * position. Decoding never throws: a cursor that is not one is `undefined`, for the caller to name as a bad field.
 */
import { timingSafeEqual } from 'node:crypto';
import { keyedHash, type KeyedHashForm } from './keyed-hash';

/** Longest cursor read by default, characters. */
export const CURSOR_MAX_CHARS = 300;

/** The signature of a signed cursor: 24 hex digits (96 bits) of the keyed hash of the payload. */
const TAG: KeyedHashForm = { prefix: '', hexDigits: 24 };

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Options of {@link cursorCodec}. */
export interface CursorOptions {
  /** Longest cursor read, characters (the tag included). Default {@link CURSOR_MAX_CHARS}. */
  readonly maxChars?: number;
  /** Signs the cursors under this key (stable across instances: any instance reads any instance's cursor). */
  readonly key?: string | Buffer;
}

/** Writes and reads the cursors of one kind of page. */
export interface CursorCodec {
  /** The cursor of `position` (a JSON value: plain objects, arrays, strings, finite numbers, booleans, null). */
  encode(position: unknown): string;
  /**
   * The position `cursor` stands for, as `read` gives it; `undefined` when `cursor` is not one this codec wrote
   * (characters, length, base64url or JSON not the codec's own spelling, signature) or `read` refuses its value.
   */
  decode<T>(cursor: string, read: (value: unknown) => T | undefined): T | undefined;
}

/** A cursor codec (signed when `options.key` is given). */
export function cursorCodec(options: CursorOptions = {}): CursorCodec {
  const maxChars = options.maxChars ?? CURSOR_MAX_CHARS;
  const key = options.key;
  const tagOf = (payload: string): string => (key === undefined ? '' : keyedHash(key, payload, TAG));
  return {
    encode(position) {
      const payload = Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
      return payload + tagOf(payload);
    },
    decode(cursor, read) {
      if (typeof cursor !== 'string' || cursor.length > maxChars || !BASE64URL.test(cursor)) return undefined;
      let payload = cursor;
      if (key !== undefined) {
        payload = cursor.slice(0, -TAG.hexDigits);
        const tag = Buffer.from(cursor.slice(-TAG.hexDigits), 'latin1');
        const want = Buffer.from(tagOf(payload), 'latin1');
        if (payload.length === 0 || tag.length !== want.length || !timingSafeEqual(tag, want)) return undefined;
      }
      const text = Buffer.from(payload, 'base64url').toString('utf8');
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return undefined;
      }
      // one spelling per position: a cursor re-encoded from its value is the cursor itself
      if (Buffer.from(JSON.stringify(value), 'utf8').toString('base64url') !== payload) return undefined;
      try {
        return read(value);
      } catch {
        return undefined;
      }
    },
  };
}
