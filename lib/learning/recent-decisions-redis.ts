/**
 * The recent decisions in Redis: one list per user, `{prefix}recent:v1:<keyed hash of the user id>`, newest first,
 * each element a compact entry (lib/learning/recent-decisions-store.ts). A batch is one pipeline: per user one LPUSH
 * of the batch's entries, one LTRIM to the newest `perUser`, one PEXPIRE of `ttlMs`. The key never holds the raw id.
 * @module
 */
import type { Redis } from 'ioredis';
import {
  decodeEntry,
  encodeEntry,
  type RecentBatch,
  type RecentBounds,
  type RecentDecision,
  type RecentDecisionStore,
} from './recent-decisions-store';

/** Options of a {@link RedisRecentDecisionStore}. */
export interface RedisRecentOptions extends RecentBounds {
  /** Prepended to every key (`REDIS_KEY_PREFIX`; tests use their own). */
  readonly prefix: string;
}

/** The key of a user's list. */
export function recentKey(prefix: string, userHash: string): string {
  return `${prefix}recent:v1:${userHash}`;
}

/** Recent decisions in Redis (see the module doc). */
export class RedisRecentDecisionStore implements RecentDecisionStore {
  constructor(
    private readonly client: () => Redis | undefined,
    private readonly o: RedisRecentOptions,
  ) {}

  private redis(): Redis {
    const c = this.client();
    if (c === undefined) throw new Error('recent decisions: Redis is not connected');
    return c;
  }

  async add(batch: RecentBatch): Promise<void> {
    if (batch.size === 0) return;
    const p = this.redis().pipeline();
    for (const [hash, entries] of batch) {
      if (entries.length === 0) continue;
      const key = recentKey(this.o.prefix, hash);
      // entries are oldest first: LPUSH of several puts the last one at the head (newest first)
      p.lpush(key, ...entries.map(encodeEntry));
      p.ltrim(key, 0, this.o.perUser - 1);
      p.pexpire(key, this.o.ttlMs);
    }
    const results = (await p.exec()) ?? [];
    const failed = results.find(([err]) => err !== null)?.[0];
    if (failed !== undefined && failed !== null) throw failed;
  }

  async read(userHash: string): Promise<RecentDecision[]> {
    const texts = await this.redis().lrange(recentKey(this.o.prefix, userHash), 0, this.o.perUser - 1);
    const out: RecentDecision[] = [];
    for (const t of texts) {
      const e = decodeEntry(t);
      if (e !== undefined) out.push(e);
    }
    return out;
  }

  async erase(userHash: string): Promise<boolean> {
    return (await this.redis().del(recentKey(this.o.prefix, userHash))) > 0;
  }

  /** The client is the engine's (or the caller's): nothing of its own to close. */
  dispose(): Promise<void> {
    return Promise.resolve();
  }
}
