import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError } from '../errors/errors';

/** Makes sure scoring for one transaction never runs twice at the same time. */
export interface TransactionGuard {
  /**
   * Runs `fn` holding the transaction's lock. In-process callers for the same transaction share one run;
   * if another instance holds the lock, throws a transient `transaction_in_progress` error.
   */
  run<T>(transactionId: string, fn: () => Promise<T>): Promise<T>;
}

/** In-process single-flight per transaction id (enough when only one process scores). */
export class LocalTransactionGuard implements TransactionGuard {
  private readonly inFlight = new Map<string, Promise<unknown>>();
  run<T>(transactionId: string, fn: () => Promise<T>): Promise<T> {
    const running = this.inFlight.get(transactionId);
    if (running !== undefined) return running as Promise<T>;
    const p = fn().finally(() => this.inFlight.delete(transactionId));
    this.inFlight.set(transactionId, p);
    return p;
  }
}

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/**
 * Cross-instance lock in Redis (`SET NX PX` with a random token, released by a compare-and-delete script),
 * on top of in-process single-flight.
 */
export class RedisTransactionGuard implements TransactionGuard {
  private readonly local = new LocalTransactionGuard();
  /**
   * @param lockTtlMs how long a lock lives if its holder dies, ms. Default 30 s.
   */
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly lockTtlMs = 30_000,
  ) {}

  run<T>(transactionId: string, fn: () => Promise<T>): Promise<T> {
    return this.local.run(transactionId, async () => {
      const key = `${this.keyPrefix}lock:v1:${transactionId}`;
      const token = randomUUID();
      let ok: string | null;
      try {
        ok = await this.redis.set(key, token, 'PX', this.lockTtlMs, 'NX');
      } catch (err) {
        throw new AppError('dependency_unavailable', 'The transaction lock (Redis) is unavailable.', { cause: err, transient: true, retryAfterSec: 1 });
      }
      if (ok !== 'OK') {
        throw new AppError('transaction_in_progress', 'This transaction is being scored by another instance.', { transient: true, retryAfterSec: 1 });
      }
      try {
        return await fn();
      } finally {
        await this.redis.eval(RELEASE, 1, key, token).catch(() => undefined); // expires by itself otherwise
      }
    });
  }
}
