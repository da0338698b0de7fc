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

/** Options of {@link RedisTransactionGuard}. */
export interface RedisTransactionGuardOptions {
  /** How long a lock lives if its holder dies, ms. Default 30 s. */
  readonly lockTtlMs?: number;
  /** How long to wait for another holder to finish before giving up with `transaction_in_progress`, ms. Default 2 s. */
  readonly waitMs?: number;
  /** Pause between checks while waiting, ms. Default 25. */
  readonly pollMs?: number;
  /** Sleeps `ms` (injectable for tests). Default `setTimeout`. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * Cross-instance lock in Redis (`SET NX PX` with a random token, released by a compare-and-delete script),
 * on top of in-process single-flight. A caller that finds the lock held waits (bounded) for the holder to
 * finish, so a redelivery racing the first delivery finds the stored result instead of failing.
 */
export class RedisTransactionGuard implements TransactionGuard {
  private readonly local = new LocalTransactionGuard();
  private readonly client: () => Redis | undefined;
  private readonly lockTtlMs: number;
  private readonly waitMs: number;
  private readonly pollMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    redis: Redis | (() => Redis | undefined),
    private readonly keyPrefix: string,
    options: RedisTransactionGuardOptions = {},
  ) {
    this.client = typeof redis === 'function' ? redis : () => redis;
    this.lockTtlMs = options.lockTtlMs ?? 30_000;
    this.waitMs = options.waitMs ?? 2000;
    this.pollMs = options.pollMs ?? 25;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  run<T>(transactionId: string, fn: () => Promise<T>): Promise<T> {
    return this.local.run(transactionId, async () => {
      const key = `${this.keyPrefix}lock:v1:${transactionId}`;
      const token = randomUUID();
      const redis = this.client();
      if (redis === undefined) {
        throw new AppError('dependency_unavailable', 'The transaction lock (Redis) is not set up yet.', {
          transient: true,
          retryAfterSec: 1,
        });
      }
      const release = (): Promise<unknown> => redis.eval(RELEASE, 1, key, token).catch(() => undefined); // else it expires by itself
      for (let waited = 0; ; waited += this.pollMs) {
        let ok: string | null;
        try {
          ok = await redis.set(key, token, 'PX', this.lockTtlMs, 'NX');
        } catch (err) {
          void release(); // the SET may have reached the server even though the reply did not arrive in time
          throw new AppError('dependency_unavailable', 'The transaction lock (Redis) is unavailable.', {
            cause: err,
            transient: true,
            retryAfterSec: 1,
          });
        }
        if (ok === 'OK') break;
        if (waited >= this.waitMs) {
          throw new AppError('transaction_in_progress', 'This transaction is being scored by another instance.', {
            transient: true,
            retryAfterSec: 1,
          });
        }
        await this.sleep(this.pollMs);
      }
      try {
        return await fn();
      } finally {
        await release();
      }
    });
  }
}
