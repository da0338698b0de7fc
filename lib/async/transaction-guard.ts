import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError } from '../errors/errors';

/** Makes sure work for one transaction never runs twice at the same time. */
export interface TransactionGuard {
  /**
   * Runs `fn` holding the transaction's lock. In-process callers for the same transaction share one run;
   * if another instance holds the lock, throws a transient `transaction_in_progress` error.
   * `fn` gets a signal that aborts if the lock is lost while it runs (it must then not publish).
   */
  run<T>(transactionId: string, fn: (lost: AbortSignal) => Promise<T>): Promise<T>;
}

/** In-process single-flight per transaction id (enough when only one process scores). */
export class LocalTransactionGuard implements TransactionGuard {
  private readonly inFlight = new Map<string, Promise<unknown>>();
  run<T>(transactionId: string, fn: (lost: AbortSignal) => Promise<T>): Promise<T> {
    const running = this.inFlight.get(transactionId);
    if (running !== undefined) return running as Promise<T>;
    const p = fn(new AbortController().signal).finally(() => this.inFlight.delete(transactionId));
    this.inFlight.set(transactionId, p);
    return p;
  }
}

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;

/** Runs `tick` every `ms` until the returned function is called. */
export type Every = (ms: number, tick: () => void) => () => void;

const realEvery: Every = (ms, tick) => {
  const t = setInterval(tick, ms);
  t.unref();
  return () => clearInterval(t);
};

/** Options of {@link RedisTransactionGuard}. */
export interface RedisTransactionGuardOptions {
  /** How long a lock outlives a holder that died, ms (`IDEMPOTENCY_LOCK_TTL_MS`). Default 30 s. */
  readonly lockTtlMs?: number;
  /**
   * Longest time a live holder keeps the lock by renewing it, ms. Default 5 min. The lock is renewed every
   * `lockTtlMs / 3` while `fn` runs, at most this long; a holder stuck longer loses it (the signal aborts).
   */
  readonly maxHoldMs?: number;
  /** How long to wait for another holder to finish before giving up with `transaction_in_progress`, ms. Default 2 s. */
  readonly waitMs?: number;
  /** Pause between checks while waiting, ms. Default 25. */
  readonly pollMs?: number;
  /** Sleeps `ms` (injectable for tests). Default `setTimeout`. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Schedules the renewals (injectable for tests). Default `setInterval` (unref'd). */
  readonly every?: Every;
}

/**
 * Cross-instance lock in Redis (`SET NX PX` with a random token, renewed while the holder runs, released by
 * a compare-and-delete script), on top of in-process single-flight. A caller that finds the lock held waits
 * (bounded) for the holder to finish, so a redelivery racing the first delivery finds the stored result
 * instead of failing.
 */
export class RedisTransactionGuard implements TransactionGuard {
  private readonly local = new LocalTransactionGuard();
  private readonly client: () => Redis | undefined;
  private readonly lockTtlMs: number;
  private readonly maxHoldMs: number;
  private readonly waitMs: number;
  private readonly pollMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly every: Every;

  constructor(
    redis: Redis | (() => Redis | undefined),
    private readonly keyPrefix: string,
    options: RedisTransactionGuardOptions = {},
  ) {
    this.client = typeof redis === 'function' ? redis : () => redis;
    this.lockTtlMs = options.lockTtlMs ?? 30_000;
    this.maxHoldMs = options.maxHoldMs ?? 5 * 60_000;
    this.waitMs = options.waitMs ?? 2000;
    this.pollMs = options.pollMs ?? 25;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.every = options.every ?? realEvery;
  }

  run<T>(transactionId: string, fn: (lost: AbortSignal) => Promise<T>): Promise<T> {
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
      const lost = new AbortController();
      const period = Math.max(1, Math.floor(this.lockTtlMs / 3));
      let renewalsLeft = Math.floor(this.maxHoldMs / period);
      const stop = this.every(period, () => {
        if (lost.signal.aborted) return;
        if (renewalsLeft-- <= 0) return lost.abort(new Error('held longer than maxHoldMs')); // let it expire
        redis.eval(RENEW, 1, key, token, String(this.lockTtlMs)).then(
          (n) => (n === 1 ? undefined : lost.abort(new Error('lock taken over'))),
          () => undefined, // Redis unreachable: the next tick tries again; the lock may expire meanwhile
        );
      });
      try {
        return await fn(lost.signal);
      } finally {
        stop();
        await release();
      }
    });
  }
}
