/**
 * Small seeded pseudo-random number generator (mulberry32) with the distributions the synthetic data and the
 * random-weight models need. Never uses `Math.random`: the same seed always yields the same sequence, on every
 * platform (only 32-bit integer arithmetic and IEEE doubles are involved).
 */
export class Prng {
  private state: number;

  /** @param seed any integer (taken modulo 2^32). */
  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Next raw 32-bit unsigned integer. */
  nextUint32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform double in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform double in [min, max). */
  uniform(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** Uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** `true` with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Standard normal variate (Box–Muller; one draw per call, the pair's second value is discarded). */
  normal(mean = 0, sd = 1): number {
    const u = 1 - this.next(); // (0, 1]
    const v = this.next();
    return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal variate: `exp(N(mu, sigma))`. */
  logNormal(mu: number, sigma: number): number {
    return Math.exp(this.normal(mu, sigma));
  }

  /** Poisson variate (Knuth's method; intended for small `lambda`, ≲ 30). */
  poisson(lambda: number): number {
    const limit = Math.exp(-lambda);
    let k = 0;
    let p = this.next();
    while (p > limit) {
      k++;
      p *= this.next();
    }
    return k;
  }

  /** Uniformly chosen element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick() from an empty array');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Element chosen with probability proportional to its weight (weights ≥ 0, not all zero). */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (let i = 0; i < items.length; i++) total += (items[i] as readonly [T, number])[1];
    let r = this.next() * total;
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as readonly [T, number];
      r -= item[1];
      if (r < 0) return item[0];
    }
    const last = items[items.length - 1];
    if (last === undefined) throw new RangeError('weighted() from an empty array');
    return last[0];
  }

  /** In-place Fisher–Yates shuffle. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const tmp = items[i] as T;
      items[i] = items[j] as T;
      items[j] = tmp;
    }
    return items;
  }
}
