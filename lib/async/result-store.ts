import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { AppError } from '../errors/errors';
import type { ScoreResult } from '../scoring/scorer';

/** The result published for an asynchronously scored payment: the HTTP result plus message fields. */
export interface AsyncScoreResult extends ScoreResult {
  /** The trigger message's correlation id, if it had one. */
  readonly correlationId?: string;
  /** When the payment was first scored (ISO 8601). Identical on every redelivery. */
  readonly scoredAt: string;
}

/** Keeps the first result of each transaction, so redeliveries re-emit it instead of scoring again. */
export interface ResultStore {
  /** The stored result of a transaction, if any. */
  get(transactionId: string): Promise<AsyncScoreResult | undefined>;
  /** Stores a result unless one is already stored; returns whichever is stored (first writer wins). */
  putIfAbsent(transactionId: string, result: AsyncScoreResult): Promise<AsyncScoreResult>;
}

/**
 * In-process store (no Redis configured): bounded LRU with the same TTL as Redis would use.
 * @param ttlSec how long a result is kept, s.
 * @param maxEntries bound on stored results.
 * @param now clock for TTLs, ms (monotonic). Default `performance.now`.
 */
export class MemoryResultStore implements ResultStore {
  private readonly cache: LRUCache<string, AsyncScoreResult>;
  constructor(ttlSec: number, maxEntries: number, now: () => number = () => performance.now()) {
    this.cache = new LRUCache<string, AsyncScoreResult>({
      max: maxEntries,
      ttl: ttlSec * 1000,
      perf: { now },
      ttlResolution: 0,
      ttlAutopurge: false,
    });
  }
  get(transactionId: string): Promise<AsyncScoreResult | undefined> {
    return Promise.resolve(this.cache.get(transactionId));
  }
  putIfAbsent(transactionId: string, result: AsyncScoreResult): Promise<AsyncScoreResult> {
    const existing = this.cache.get(transactionId);
    if (existing !== undefined) return Promise.resolve(existing);
    this.cache.set(transactionId, result);
    return Promise.resolve(result);
  }
}

/**
 * Redis store: `SET key value NX EX ttl`, so the first result of a transaction wins across instances.
 * Failures surface as transient `dependency_unavailable` errors (the message is redelivered).
 */
export class RedisResultStore implements ResultStore {
  /**
   * @param redis the client, or a getter for a client that may not be set up yet (then calls fail transiently).
   * @param keyPrefix prefix of every key (e.g. `scoring:`); keys are `${keyPrefix}result:v1:{transactionId}`.
   * @param ttlSec how long a result is kept, s (hours by default).
   */
  constructor(
    redis: Redis | (() => Redis | undefined),
    private readonly keyPrefix: string,
    private readonly ttlSec: number,
  ) {
    this.client = typeof redis === 'function' ? redis : () => redis;
  }
  private readonly client: () => Redis | undefined;

  private key(transactionId: string): string {
    return `${this.keyPrefix}result:v1:${transactionId}`;
  }

  async get(transactionId: string): Promise<AsyncScoreResult | undefined> {
    const raw = await this.call((redis) => redis.get(this.key(transactionId)));
    return raw === null ? undefined : (JSON.parse(raw) as AsyncScoreResult);
  }

  async putIfAbsent(transactionId: string, result: AsyncScoreResult): Promise<AsyncScoreResult> {
    const key = this.key(transactionId);
    const ok = await this.call((redis) => redis.set(key, JSON.stringify(result), 'EX', this.ttlSec, 'NX'));
    if (ok === 'OK') return result;
    const stored = await this.get(transactionId);
    return stored ?? result;
  }

  private async call<T>(fn: (redis: Redis) => Promise<T>): Promise<T> {
    try {
      const redis = this.client();
      if (redis === undefined) throw new Error('Redis is not set up yet');
      return await fn(redis);
    } catch (err) {
      throw new AppError('dependency_unavailable', 'The result store (Redis) is unavailable.', {
        cause: err,
        transient: true,
        retryAfterSec: 1,
      });
    }
  }
}
