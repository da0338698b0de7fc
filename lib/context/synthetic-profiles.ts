import type { UserProfile } from '../domain/user-context';

/** Deterministic PRNG (mulberry32): same seed, same sequence. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COUNTRIES = ['FR', 'DE', 'GB', 'US', 'ES', 'IT', 'NL', 'BE', 'PL', 'SE', 'PT', 'IE', 'AT', 'CH', 'CA'];
const hex = (rnd: () => number, n: number): string => {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(rnd() * 16).toString(16);
  return s;
};

/** A synthetic user id: `user-{index}`. */
export const syntheticUserId = (index: number): string => `user-${index}`;

/**
 * A realistic synthetic profile for user `index` (same index, same profile): a home country (skewed to
 * a few), a log-normal usual amount (median ≈ 45), 1–6 known devices with real-looking ids (iOS vendor
 * UUIDs, Android ids, web fingerprints), and an account opened in the last 8 years before `asOf`.
 * Used by `npm run seed:profiles`, the cache benchmark and tests.
 */
export function syntheticProfile(index: number, asOf = Date.UTC(2026, 0, 1)): UserProfile {
  const rnd = mulberry32(0x9e3779b9 ^ index);
  const homeCountry = COUNTRIES[Math.min(COUNTRIES.length - 1, Math.floor(COUNTRIES.length * rnd() ** 2))] as string;
  const normal = Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const usualAmount = Math.round(Math.exp(Math.log(45) + 0.9 * normal) * 100) / 100;
  const devices: string[] = [];
  const n = 1 + Math.floor(rnd() ** 2 * 6);
  for (let i = 0; i < n; i++) {
    const kind = rnd();
    if (kind < 0.4)
      devices.push(`ios-${hex(rnd, 8)}-${hex(rnd, 4)}-4${hex(rnd, 3)}-${hex(rnd, 4)}-${hex(rnd, 12)}`.toUpperCase());
    else if (kind < 0.75) devices.push(`android-${hex(rnd, 16)}`);
    else devices.push(`web-${hex(rnd, 32)}`);
  }
  const accountCreatedAt = new Date(asOf - Math.floor(rnd() * 8 * 365 * 86_400_000)).toISOString();
  return { homeCountry, usualAmount, knownDevices: devices, accountCreatedAt };
}

/**
 * A Zipf(s) sampler over ranks `0 … n-1` (rank 0 the most popular): P(k) ∝ 1 / (k+1)^s. Precomputes the
 * CDF (n doubles), then samples by binary search.
 * @param rnd uniform source in [0, 1), e.g. {@link mulberry32}.
 */
export function zipfSampler(n: number, s: number, rnd: () => number): () => number {
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let k = 0; k < n; k++) cdf[k] = acc += 1 / (k + 1) ** s;
  for (let k = 0; k < n; k++) cdf[k] = (cdf[k] as number) / acc;
  return () => {
    const u = rnd();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
