import { LRUCache } from 'lru-cache';
import type { Velocity } from '../domain/user-context';

/** Window lengths, ms. A payment at time `t` is in the window of length `W` at `now` iff `now - t < W`. */
export const WINDOW_MS = Object.freeze({ m1: 60_000, h1: 3_600_000, d1: 86_400_000 });

/** Most payments kept per user (the oldest beyond are dropped). Default of `maxEventsPerUser`. */
export const DEFAULT_MAX_EVENTS_PER_USER = 10_000;

/** Velocity of a user before one payment: what the featurizer reads, plus the 1 min and 1 h sums. */
export interface VelocityFigures extends Velocity {
  /** Sum of amounts in the last 60 s, currency units. */
  readonly sum1m: number;
  /** Sum of amounts in the last hour, currency units. */
  readonly sum1h: number;
}

/** One payment to count. */
export interface PaymentRecord {
  readonly userId: string;
  /** Idempotency key: a payment recorded twice counts once and gets the same figures both times. */
  readonly transactionId: string;
  /** Amount in currency units (summed as given; no currency conversion). */
  readonly amount: number;
  readonly country: string;
  /** When the payment was seen, epoch ms, on the scoring instance's clock (not the client's timestamp). */
  readonly at: number;
}

/**
 * Records payments and returns each one's velocity as it was before it, atomically. Implementations
 * (Redis Lua script, in-process) share one contract suite.
 *
 * Rules: on the first record of a transaction, drop payments with `at ≤ now − 24 h`, compute the figures
 * over the remaining payments (excluding this one; payments stamped later than `now` by a skewed clock
 * count in every window), store the payment with its figures, then drop the oldest payments beyond
 * `maxEventsPerUser`. A repeated `transactionId` returns the stored figures and changes nothing.
 */
export interface VelocityStore {
  record(p: PaymentRecord): Promise<VelocityFigures>;
}

/** Rounds a sum to 1e-6 so float order effects do not differ between implementations. */
export const roundSum = (x: number): number => Math.round(x * 1e6) / 1e6;

/** Figures of a user with no payments. */
export const NO_FIGURES: VelocityFigures = Object.freeze({
  count1m: 0,
  count1h: 0,
  count24h: 0,
  sum24h: 0,
  distinctCountries24h: 0,
  sum1m: 0,
  sum1h: 0,
});

interface Stored {
  readonly at: number;
  readonly amount: number;
  readonly country: string;
  readonly figures: VelocityFigures;
}

/** Computes figures at `now` over payments (all assumed within 24 h). */
export function figuresOf(
  payments: Iterable<{ readonly at: number; readonly amount: number; readonly country: string }>,
  now: number,
): VelocityFigures {
  let count1m = 0,
    count1h = 0,
    count24h = 0,
    sum1m = 0,
    sum1h = 0,
    sum24h = 0;
  const countries = new Set<string>();
  for (const p of payments) {
    const age = now - p.at;
    count24h++;
    sum24h += p.amount;
    countries.add(p.country);
    if (age < WINDOW_MS.h1) {
      count1h++;
      sum1h += p.amount;
    }
    if (age < WINDOW_MS.m1) {
      count1m++;
      sum1m += p.amount;
    }
  }
  return {
    count1m,
    count1h,
    count24h,
    sum1m: roundSum(sum1m),
    sum1h: roundSum(sum1h),
    sum24h: roundSum(sum24h),
    distinctCountries24h: countries.size,
  };
}

/** Options of a {@link MemoryVelocityStore}. */
export interface MemoryVelocityOptions {
  /** Most users tracked (least recently active dropped). Default 100 000. */
  readonly maxUsers?: number;
  /** Default {@link DEFAULT_MAX_EVENTS_PER_USER}. */
  readonly maxEventsPerUser?: number;
}

/** In-process velocity store (used without Redis). Same rules as the Lua script; bounded by users and events. */
export class MemoryVelocityStore implements VelocityStore {
  private readonly users: LRUCache<string, Map<string, Stored>>;
  private readonly maxEvents: number;
  constructor(options: MemoryVelocityOptions = {}) {
    this.users = new LRUCache({ max: options.maxUsers ?? 100_000 });
    this.maxEvents = options.maxEventsPerUser ?? DEFAULT_MAX_EVENTS_PER_USER;
  }

  record(p: PaymentRecord): Promise<VelocityFigures> {
    let txs = this.users.get(p.userId);
    if (txs === undefined) this.users.set(p.userId, (txs = new Map()));
    const prev = txs.get(p.transactionId);
    if (prev !== undefined) return Promise.resolve(prev.figures);
    for (const [id, s] of txs) if (s.at <= p.at - WINDOW_MS.d1) txs.delete(id);
    const figures = figuresOf(txs.values(), p.at);
    txs.set(p.transactionId, { at: p.at, amount: p.amount, country: p.country, figures });
    if (txs.size > this.maxEvents) {
      // oldest first, ties by transaction id (as Redis ZPOPMIN orders them)
      const order = [...txs].sort(([ia, a], [ib, b]) => a.at - b.at || (ia < ib ? -1 : ia > ib ? 1 : 0));
      for (const [id] of order.slice(0, txs.size - this.maxEvents)) txs.delete(id);
    }
    return Promise.resolve(figures);
  }
}
