import { createHmac } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** Prefix of every keyed hash of the learning loop, so a hashed value is never mistaken for a raw id. */
export const HASH_PREFIX = 'h_';

/** Most recent values whose hashes a {@link KeyedHash} keeps by default. */
export const KEYED_HASH_MEMO_MAX = 10_000;

/** How a keyed hash is written: a prefix, then the first hex digits of the HMAC. */
export interface KeyedHashForm {
  readonly prefix: string;
  /** Hex digits kept of the 64 of HMAC-SHA256 (an even number from 2 to 64). */
  readonly hexDigits: number;
}

/** The learning loop's form (decisions, labels, list entries, erasure): `h_` + 32 hex digits. */
export const ID_HASH: KeyedHashForm = { prefix: HASH_PREFIX, hexDigits: 32 };

/**
 * The keyed hash of `value`: `form.prefix` + the first `form.hexDigits` hex digits of HMAC-SHA256(key, value as
 * UTF-8). The one keyed hash of the service: the learning loop's ids, the escalation prompt's user, the spans' user.
 */
export function keyedHash(key: string | Buffer, value: string, form: KeyedHashForm = ID_HASH): string {
  return form.prefix + createHmac('sha256', key).update(value, 'utf8').digest('hex').slice(0, form.hexDigits);
}

/**
 * Keyed hashes of id fields under one key ({@link keyedHash}, by default in the form {@link ID_HASH}). The same key
 * gives the same hash on every instance and across restarts, so decisions, labels, list entries and an erasure
 * request can all be matched by it; without the key a hash cannot be computed from a guessed id.
 *
 * The hashes of the most recent values are kept (a bounded LRU, `memoMax` entries, default
 * {@link KEYED_HASH_MEMO_MAX}; 0 keeps none): a user, device or session pays for several payments in a row, and an
 * HMAC costs a few µs of the request's thread (its key schedule, a native call, the hex string). The memo lives in
 * the process's memory only, as the payments themselves do while they are scored.
 */
export class KeyedHash {
  private readonly key: Buffer;
  private readonly memo: LRUCache<string, string> | undefined;
  /** @throws RangeError when `form.hexDigits` is not an even number from 2 to 64. */
  constructor(
    key: string | Buffer,
    memoMax = KEYED_HASH_MEMO_MAX,
    private readonly form: KeyedHashForm = ID_HASH,
  ) {
    const d = form.hexDigits;
    if (!Number.isInteger(d) || d < 2 || d > 64 || d % 2 !== 0)
      throw new RangeError(`KeyedHash: hexDigits must be an even number from 2 to 64, got ${d}`);
    this.key = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
    this.memo = memoMax > 0 ? new LRUCache<string, string>({ max: memoMax }) : undefined;
  }

  /** The keyed hash of `value` (e.g. a user id), in this hash's form (default `h_` + 32 hex digits). */
  of(value: string): string {
    const known = this.memo?.get(value);
    if (known !== undefined) return known;
    const hash = keyedHash(this.key, value, this.form);
    this.memo?.set(value, hash);
    return hash;
  }
}
