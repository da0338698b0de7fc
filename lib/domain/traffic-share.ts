/**
 * Stable shares of keys (users, transactions) for canary and shadow splits: a key's bucket depends only on
 * the key and a salt, so it is the same on every instance and across restarts. Shared by the model's traffic
 * router and the ruleset canary.
 */

/** Resolution of percentages: buckets 0–9999, i.e. 0.01 %. */
export const BUCKETS = 10_000;

/**
 * Stable bucket in [0, {@link BUCKETS}) of a key (FNV-1a 32-bit of `salt:key`): the same on every
 * instance and across restarts.
 */
export function routingBucket(key: string, salt: string): number {
  let h = 0x811c9dc5;
  const s = `${salt}:${key}`;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % BUCKETS;
}

/** Whether `key` falls within `percent` (0–100) of keys for this salt. */
export function inShare(key: string, salt: string, percent: number): boolean {
  return routingBucket(key, salt) < Math.round(percent * (BUCKETS / 100));
}
