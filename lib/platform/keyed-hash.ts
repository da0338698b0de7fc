import { createHmac } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** Prefix of every keyed hash, so a hashed value is never mistaken for a raw id. */
export const HASH_PREFIX = 'h_';

/** Most recent values whose hashes a {@link KeyedHash} keeps by default. */
export const KEYED_HASH_MEMO_MAX = 10_000;

/**
 * Keyed hashes of id fields (HMAC-SHA256 under one key, the first 16 bytes as hex, prefixed `h_`). The same
 * key gives the same hash on every instance and across restarts, so decisions, labels, list entries and an
 * erasure request can all be matched by it; without the key a hash cannot be computed from a guessed id.
 *
 * The hashes of the most recent values are kept (a bounded LRU, `memoMax` entries, default
 * {@link KEYED_HASH_MEMO_MAX}): a user, device or session pays for several payments in a row, and an HMAC costs
 * a few µs of the request's thread (its key schedule, a native call, the hex string). The memo lives in the
 * process's memory only, as the payments themselves do while they are scored.
 */
export class KeyedHash {
  private readonly key: Buffer;
  private readonly memo: LRUCache<string, string> | undefined;
  constructor(key: string | Buffer, memoMax = KEYED_HASH_MEMO_MAX) {
    this.key = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
    this.memo = memoMax > 0 ? new LRUCache<string, string>({ max: memoMax }) : undefined;
  }

  /** The keyed hash of `value` (e.g. a user id): `h_` + 32 hex digits. */
  of(value: string): string {
    const known = this.memo?.get(value);
    if (known !== undefined) return known;
    const hash = HASH_PREFIX + createHmac('sha256', this.key).update(value, 'utf8').digest('hex').slice(0, 32);
    this.memo?.set(value, hash);
    return hash;
  }
}
