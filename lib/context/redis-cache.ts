import type { Redis } from 'ioredis';
import type { CacheTierEvents, ContextCache, ContextKey } from './cache-tier';
import { decodeContext, encodeContext, type CachedContext } from './context-value';
import type { ContextKeys } from './keys';
import { runScript } from '../platform/redis/script';

/** Options of a {@link RedisContextCache}. A value is fresh while its age (on `now`) is at most `ttlMs`, as in L1. */
export interface RedisCacheOptions {
  readonly keys: ContextKeys;
  /** Time to live, ms (`CONTEXT_L2_TTL_SEC`, default 240 s). Enforced by Redis (`PX`) and on read with `now`. */
  readonly ttlMs: number;
  /** Wall clock, epoch ms; stamps values and checks their age. Default `Date.now`. */
  readonly now?: () => number;
  readonly on?: Partial<CacheTierEvents>;
}

/** Stores a value and indexes its key. KEYS = value key, index; ARGV = value, TTL ms. */
const SET_LUA = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], KEYS[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])`;

/** Deletes every key listed in a user's index set, then the set. KEYS[1] = index. */
const DELETE_USER_LUA = `
local ks = redis.call('SMEMBERS', KEYS[1])
for i = 1, #ks, 500 do redis.call('DEL', unpack(ks, i, math.min(i + 499, #ks))) end
redis.call('DEL', KEYS[1])
return #ks`;

/**
 * L2: the context cache in Redis, shared by every instance. Values are JSON, LZ4 block-compressed behind
 * the versioned header of `codec.ts`. A value that cannot be read is a miss (and a `corrupt` event), never
 * an error. Redis errors do propagate: the caller owns the time budget and the degraded path.
 */
export class RedisContextCache implements ContextCache {
  private readonly now: () => number;
  constructor(
    private readonly client: Redis,
    private readonly options: RedisCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  async get(key: ContextKey): Promise<CachedContext | undefined> {
    const frame = await this.client.getBuffer(key.key);
    if (frame === null) return undefined;
    const r = decodeContext(frame);
    if (!r.ok) {
      this.options.on?.corrupt?.({ tier: 'l2', reason: r.reason });
      return undefined;
    }
    if (this.now() - r.stored.storedAt > this.options.ttlMs) return undefined;
    return r.stored.value;
  }

  /** Stores the value and indexes the key under its user, atomically, in one command (a script). */
  async set(key: ContextKey, value: CachedContext): Promise<void> {
    const { ttlMs, keys } = this.options;
    await runScript(
      this.client,
      SET_LUA,
      [key.key, keys.ctxIndex(key.userId)],
      [encodeContext(value, this.now()), ttlMs],
    );
  }

  async delete(key: ContextKey): Promise<void> {
    await this.client.multi().del(key.key).srem(this.options.keys.ctxIndex(key.userId), key.key).exec();
  }

  async deleteUser(userId: string): Promise<void> {
    await runScript(this.client, DELETE_USER_LUA, [this.options.keys.ctxIndex(userId)], []);
  }
}
