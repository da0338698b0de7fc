import { createHmac } from 'node:crypto';

/** Prefix of every keyed hash, so a hashed value is never mistaken for a raw id. */
export const HASH_PREFIX = 'h_';

/**
 * Keyed hashes of id fields (HMAC-SHA256 under one key, the first 16 bytes as hex, prefixed `h_`). The same
 * key gives the same hash on every instance and across restarts, so decisions, labels, list entries and an
 * erasure request can all be matched by it; without the key a hash cannot be computed from a guessed id.
 */
export class KeyedHash {
  private readonly key: Buffer;
  constructor(key: string | Buffer) {
    this.key = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  }

  /** The keyed hash of `value` (e.g. a user id): `h_` + 32 hex digits. */
  of(value: string): string {
    return HASH_PREFIX + createHmac('sha256', this.key).update(value, 'utf8').digest('hex').slice(0, 32);
  }
}
