/**
 * The recent decisions of each user, written off the request path: the scorer's `decided` event → a compact entry
 * (a few fields copied) → the bounded batch queue (lib/batching) → one write per batch to the store (Redis when the
 * engine has it, else in process). Recording never waits, never throws and never fails a decision: a full queue, a
 * missing hash key or a failed write drops entries and counts them. Reads (the case page) are bounded in time and
 * answer `undefined` when the store cannot answer.
 * @module
 */
import type { Redis } from 'ioredis';
import { BatchQueue } from '../batching/batch-queue';
import type { Config } from '../config/config';
import type { KeyedHash } from '../platform/keyed-hash';
import type { Logger } from '../platform/logger';
import { unrefTimers, type Timers } from '../platform/timers';
import { withTimeout } from '../platform/with-timeout';
import type { DecidedPayment, ScorerEvents } from '../scoring/scorer';
import { RedisRecentDecisionStore } from './recent-decisions-redis';
import {
  MemoryRecentDecisionStore,
  recentEntryOf,
  type RecentDecision,
  type RecentDecisionStore,
} from './recent-decisions-store';

export type { RecentDecision, RecentDecisionStore } from './recent-decisions-store';

/** Why entries were dropped. */
export type RecentDropReason = 'queue_full' | 'write_failed' | 'no_hash_key' | 'entry_failed';

/** What the recent decisions tell their observers (telemetry counts them). Never carries an entry. */
export interface RecentDecisionsEvents {
  /** `count` entries were written in one batch. */
  written(e: { readonly count: number }): void;
  /** `count` entries were dropped. */
  dropped(e: { readonly count: number; readonly reason: RecentDropReason }): void;
}

/** Options of a {@link RecentDecisions}. */
export interface RecentDecisionsOptions {
  readonly store: RecentDecisionStore;
  /** The decision log's keyed hash (`undefined` while its key could not be read: entries are dropped). */
  readonly hash: () => KeyedHash | undefined;
  /** How long the entries live after a user's last decision, ms (what the case page says). */
  readonly ttlMs: number;
  readonly queueMax: number;
  readonly batchMax: number;
  readonly flushMs: number;
  /** Budget of one read (the case page), ms. */
  readonly readTimeoutMs: number;
  readonly timers: Timers;
  /** Wall clock, ms (an entry's `decidedAt`). Default `Date.now`. */
  readonly wallClock?: () => number;
  readonly logger?: Logger;
  readonly on?: Partial<RecentDecisionsEvents>;
}

/** A decided payment waiting for its write: the raw user id stays in process memory only. */
interface Pending {
  readonly userId: string;
  readonly entry: RecentDecision;
}

/** Log a drop reason at most every 10 s. */
const DROP_LOG_MS = 10_000;

/** The recent decisions of one engine (see the module doc). */
export class RecentDecisions {
  private readonly queue: BatchQueue<Pending>;
  private readonly wallClock: () => number;
  private dropped = 0;
  private written = 0;
  private lastDropLog = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: RecentDecisionsOptions) {
    this.wallClock = o.wallClock ?? Date.now;
    this.queue = new BatchQueue<Pending>({
      queueMax: o.queueMax,
      batchMax: o.batchMax,
      flushMs: o.flushMs,
      timers: o.timers,
      write: (batch) => this.write(batch),
      onFull: () => this.drop(1, 'queue_full'),
      onWriteError: (count) => this.drop(count, 'write_failed'),
    });
  }

  /** How long entries live after a user's last decision, ms. */
  get ttlMs(): number {
    return this.o.ttlMs;
  }

  /** Totals since creation (tests read them). */
  get stats(): { readonly written: number; readonly dropped: number; readonly queued: number } {
    return { written: this.written, dropped: this.dropped, queued: this.queue.size };
  }

  /** The scorer's `decided` handler (O(1), never throws). */
  scorerEvents(): Partial<ScorerEvents> {
    return { decided: (d) => this.decided(d) };
  }

  private decided(d: DecidedPayment): void {
    let entry: RecentDecision;
    try {
      entry = recentEntryOf(d, this.wallClock());
    } catch {
      return this.drop(1, 'entry_failed');
    }
    this.queue.offer({ userId: d.event.userId, entry });
  }

  private async write(batch: readonly Pending[]): Promise<void> {
    const hash = this.o.hash();
    if (hash === undefined) return this.drop(batch.length, 'no_hash_key');
    const users = new Map<string, RecentDecision[]>();
    for (const p of batch) {
      const h = hash.of(p.userId);
      const list = users.get(h);
      if (list === undefined) users.set(h, [p.entry]);
      else list.push(p.entry);
    }
    try {
      await this.o.store.add(users);
      this.written += batch.length;
      this.tell(() => this.o.on?.written?.({ count: batch.length }));
    } catch {
      this.drop(batch.length, 'write_failed');
    }
  }

  /** Runs an observer; its failure never reaches a score. */
  private tell(fn: () => void): void {
    try {
      fn();
    } catch {
      // an observer's failure must not reach a score
    }
  }

  private drop(count: number, reason: RecentDropReason): void {
    this.dropped += count;
    this.tell(() => this.o.on?.dropped?.({ count, reason }));
    const t = this.wallClock();
    if (t - this.lastDropLog < DROP_LOG_MS) return;
    this.lastDropLog = t;
    try {
      this.o.logger?.warn('recent decisions: entries dropped', { count, reason });
    } catch {
      // a logger's failure must not reach a score
    }
  }

  /**
   * The user's recent decisions, newest first; `undefined` when they cannot be read within the budget (Redis down,
   * the hash key not read yet).
   */
  async forUser(userId: string): Promise<RecentDecision[] | undefined> {
    const hash = this.o.hash();
    if (hash === undefined) return undefined;
    try {
      return await withTimeout(this.o.store.read(hash.of(userId)), this.o.readTimeoutMs);
    } catch {
      return undefined;
    }
  }

  /** Writes everything queued, then closes the store. */
  async dispose(): Promise<void> {
    await this.queue.dispose();
    await this.o.store.dispose();
  }
}

/** What {@link recentStoreOf} reads of the settings. */
export interface RecentStoreSettings {
  /** Redis key prefix (`REDIS_KEY_PREFIX`). */
  readonly keyPrefix: string;
  readonly perUser: number;
  readonly ttlMs: number;
  /** Users kept by the in-process store. */
  readonly maxUsers: number;
}

/**
 * The store: Redis when the engine has a Redis client (`redis` defined: the context's connection), else in process.
 * @param wallClock the in-process store's TTL clock.
 */
export function recentStoreOf(
  redis: (() => Redis | undefined) | undefined,
  s: RecentStoreSettings,
  wallClock?: () => number,
): RecentDecisionStore {
  const bounds = { perUser: s.perUser, ttlMs: s.ttlMs };
  return redis === undefined
    ? new MemoryRecentDecisionStore({
        ...bounds,
        maxUsers: s.maxUsers,
        ...(wallClock === undefined ? {} : { wallClock }),
      })
    : new RedisRecentDecisionStore(redis, { ...bounds, prefix: s.keyPrefix });
}

/** Entries per write at most. */
const RECENT_BATCH_MAX = 500;

/** Dependencies of {@link createRecentDecisions}. */
export interface RecentDecisionsDeps {
  /** The engine's Redis client getter (`undefined`: no Redis, the in-process store). */
  readonly redis: (() => Redis | undefined) | undefined;
  /** The decision log's keyed hash (`Learning.keyedHash`). */
  readonly hash: () => KeyedHash | undefined;
  readonly logger: Logger;
  /** Default unref'd timers. */
  readonly timers?: Timers;
  /** Wall clock, ms. Default `Date.now`. */
  readonly wallClock?: () => number;
  /** The store; default Redis when `redis` is given, else in process. */
  readonly store?: RecentDecisionStore;
  readonly on?: Partial<RecentDecisionsEvents>;
}

/**
 * The recent decisions of the engine: the queue takes the decision log's bounds (`DECISION_LOG_QUEUE_MAX`,
 * `DECISION_LOG_FLUSH_MS`; at most 500 entries per write), a read's budget is 4× `REDIS_TIMEOUT_MS` (at least 250 ms).
 */
export function createRecentDecisions(config: Config, deps: RecentDecisionsDeps): RecentDecisions {
  const r = config.learning.recent;
  const log = config.learning.decisionLog;
  const ttlMs = r.ttlDays * 86_400_000;
  const store =
    deps.store ??
    recentStoreOf(
      deps.redis,
      { keyPrefix: config.redis.keyPrefix, perUser: r.perUser, ttlMs, maxUsers: r.maxUsers },
      deps.wallClock,
    );
  return new RecentDecisions({
    store,
    hash: deps.hash,
    ttlMs,
    queueMax: log.queueMax,
    batchMax: Math.min(log.batchMax, RECENT_BATCH_MAX),
    flushMs: log.flushMs,
    readTimeoutMs: Math.max(250, config.redis.timeoutMs * 4),
    timers: deps.timers ?? unrefTimers,
    ...(deps.wallClock === undefined ? {} : { wallClock: deps.wallClock }),
    logger: deps.logger,
    ...(deps.on === undefined ? {} : { on: deps.on }),
  });
}
