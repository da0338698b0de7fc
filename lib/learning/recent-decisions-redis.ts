/**
 * The recent decisions in Redis: one list per user, `{prefix}recent:v1:{b}:<keyed hash of the user id>`, newest
 * first, each element a compact entry (lib/learning/recent-decisions-store.ts). `b` is the hash's last hex digit, a
 * hash tag: the users fall in 16 groups, each in one cluster slot, so that a batch is one script call per group
 * (per user in it: LPUSH of its entries, LTRIM to the newest `perUser`, PEXPIRE of `ttlMs`), not three commands per
 * user. The key never holds the raw id.
 * @module
 */
import type { Redis } from 'ioredis';
import { runScript } from '../platform/redis/script';
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

/** The key of a user's list: its group (the hash's last character, a hash tag), then the hash. */
export function recentKey(prefix: string, userHash: string): string {
  return `${prefix}recent:v1:{${userHash.slice(-1)}}:${userHash}`;
}

/** Most users of one script call (bounds the time the script holds the server). */
export const USERS_PER_CALL = 100;

/**
 * ARGV: perUser, ttlMs, then one count per key, then the entries of every key in order (oldest first: the last LPUSHed
 * is the head). Per key: LPUSH its entries, LTRIM to the newest perUser, PEXPIRE.
 */
const ADD_LUA = `local per, ttl, n = tonumber(ARGV[1]), ARGV[2], #KEYS
local at = 3 + n
for i = 1, n do
  local c = tonumber(ARGV[2 + i])
  redis.call('LPUSH', KEYS[i], unpack(ARGV, at, at + c - 1))
  redis.call('LTRIM', KEYS[i], 0, per - 1)
  redis.call('PEXPIRE', KEYS[i], ttl)
  at = at + c
end
return n`;

/** One script call: the users of one group, their entry counts and their entries. */
interface ScriptCall {
  readonly keys: string[];
  readonly counts: number[];
  readonly entries: string[];
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
    const groups = new Map<string, ScriptCall>();
    const calls: ScriptCall[] = [];
    for (const [hash, all] of batch) {
      // only the newest perUser can stay
      const entries = all.length > this.o.perUser ? all.slice(all.length - this.o.perUser) : all;
      if (entries.length === 0) continue;
      const group = hash.slice(-1);
      let g = groups.get(group);
      if (g === undefined || g.keys.length >= USERS_PER_CALL) {
        groups.set(group, (g = { keys: [], counts: [], entries: [] }));
        calls.push(g);
      }
      g.keys.push(recentKey(this.o.prefix, hash));
      g.counts.push(entries.length);
      for (const e of entries) g.entries.push(encodeEntry(e));
    }
    const redis = this.redis();
    await Promise.all(
      calls.map((g) => runScript(redis, ADD_LUA, g.keys, [this.o.perUser, this.o.ttlMs, ...g.counts, ...g.entries])),
    );
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
