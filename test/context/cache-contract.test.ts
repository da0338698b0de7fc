/**
 * One contract suite, run against every tier of the context cache: L1 (LRU), L2 in Redis, the in-process
 * L2 stand-in, and the tiered cache over each. Real Redis; each test its own key prefix, cleaned up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import type { ContextCache } from '../../lib/context/cache-tier';
import type { CachedContext } from '../../lib/context/context-value';
import { ContextKeys } from '../../lib/context/keys';
import { L1Cache } from '../../lib/context/l1-cache';
import { MemoryContextCache } from '../../lib/context/memory-cache';
import { RedisContextCache } from '../../lib/context/redis-cache';
import { TieredContextCache } from '../../lib/context/tiered-cache';
import { syntheticProfile } from '../../lib/context/synthetic-profiles';
import { cleanup, testClient, testPrefix } from './support';
import { FakeClock } from '../support/clock';

const TTL = 240_000;

interface Tier {
  readonly cache: ContextCache;
  readonly keys: ContextKeys;
  readonly clock: FakeClock;
}

let client: Redis;
const prefixes: string[] = [];
before(async () => {
  client = await testClient();
});
after(async () => {
  for (const p of prefixes) await cleanup(client, p);
  client.disconnect();
});

const l1 = (clock: FakeClock): L1Cache =>
  new L1Cache({ maxEntries: 1000, maxBytes: 1 << 20, ttlMs: TTL, now: clock.now });
const redisL2 = (keys: ContextKeys, clock: FakeClock): RedisContextCache =>
  new RedisContextCache(client, { keys, ttlMs: TTL, now: clock.now });

const TIERS: Record<string, (keys: ContextKeys, clock: FakeClock) => ContextCache> = {
  'L1 (lru-cache)': (_k, clock) => l1(clock),
  'L2 (Redis)': (keys, clock) => redisL2(keys, clock),
  'L2 (in-process store)': (_k, clock) => new MemoryContextCache({ ttlMs: TTL, now: clock.now }),
  'tiered (L1 over Redis)': (keys, clock) => new TieredContextCache({ l1: l1(clock), l2: redisL2(keys, clock) }),
  'tiered (L1 over in-process)': (_k, clock) =>
    new TieredContextCache({ l1: l1(clock), l2: new MemoryContextCache({ ttlMs: TTL, now: clock.now }) }),
};

const alice: CachedContext = { profile: syntheticProfile(1) };
const bob: CachedContext = { profile: syntheticProfile(2) };
const nobody: CachedContext = { profile: null };

for (const [name, make] of Object.entries(TIERS)) {
  describe(`context cache contract: ${name}`, () => {
    const tier = (): Tier => {
      const prefix = testPrefix('contract');
      prefixes.push(prefix);
      const keys = new ContextKeys(prefix);
      const clock = new FakeClock();
      return { cache: make(keys, clock), keys, clock };
    };

    it('misses an unknown key', async () => {
      const { cache, keys } = tier();
      assert.equal(await cache.get(keys.ctx('u1', 's1')), undefined);
    });

    it('returns what was stored, including a cached "no profile"', async () => {
      const { cache, keys } = tier();
      await cache.set(keys.ctx('u1', 's1'), alice);
      await cache.set(keys.ctx('u2'), nobody);
      assert.deepEqual(await cache.get(keys.ctx('u1', 's1')), alice);
      assert.deepEqual(await cache.get(keys.ctx('u2')), nobody);
      assert.equal(await cache.get(keys.ctx('u1')), undefined, 'session keys and user keys are distinct');
    });

    it('overwrites', async () => {
      const { cache, keys } = tier();
      await cache.set(keys.ctx('u1'), alice);
      await cache.set(keys.ctx('u1'), bob);
      assert.deepEqual(await cache.get(keys.ctx('u1')), bob);
    });

    it('deletes one key', async () => {
      const { cache, keys } = tier();
      await cache.set(keys.ctx('u1', 'a'), alice);
      await cache.set(keys.ctx('u1', 'b'), alice);
      await cache.delete(keys.ctx('u1', 'a'));
      assert.equal(await cache.get(keys.ctx('u1', 'a')), undefined);
      assert.deepEqual(await cache.get(keys.ctx('u1', 'b')), alice);
    });

    it("deletes every session of a user, and only that user's", async () => {
      const { cache, keys } = tier();
      for (const s of ['a', 'b', undefined]) await cache.set(keys.ctx('u1', s), alice);
      await cache.set(keys.ctx('u2', 'a'), bob);
      await cache.deleteUser('u1');
      for (const s of ['a', 'b', undefined]) assert.equal(await cache.get(keys.ctx('u1', s)), undefined);
      assert.deepEqual(await cache.get(keys.ctx('u2', 'a')), bob);
    });

    it('expires a value once it is older than the TTL (fake clock)', async () => {
      const { cache, keys, clock } = tier();
      await cache.set(keys.ctx('u1'), alice);
      clock.advance(TTL);
      assert.deepEqual(await cache.get(keys.ctx('u1')), alice, 'fresh at exactly the TTL');
      clock.advance(1);
      assert.equal(await cache.get(keys.ctx('u1')), undefined, 'expired 1 ms later');
    });

    it('keeps ids with separators apart', async () => {
      const { cache, keys } = tier();
      await cache.set(keys.ctx('a:b'), alice);
      assert.equal(await cache.get(keys.ctx('a', 'b')), undefined);
      assert.deepEqual(await cache.get(keys.ctx('a:b')), alice);
    });
  });
}

describe('L1 bounds', () => {
  it('holds at most maxEntries and maxBytes, evicting the least recently used', () => {
    const clock = new FakeClock();
    const keys = new ContextKeys('b:');
    const byCount = new L1Cache({ maxEntries: 3, maxBytes: 1 << 20, ttlMs: TTL, now: clock.now });
    for (let i = 0; i < 5; i++) byCount.put(keys.ctx(`u${i}`), alice);
    assert.equal(byCount.size, 3);
    assert.equal(byCount.peek(keys.ctx('u0')), undefined);
    assert.deepEqual(byCount.peek(keys.ctx('u4')), alice);
    const bySize = new L1Cache({ maxEntries: 1000, maxBytes: 2000, ttlMs: TTL, now: clock.now });
    for (let i = 0; i < 50; i++) bySize.put(keys.ctx(`u${i}`), alice);
    assert.ok(
      bySize.bytes <= 2000 && bySize.size < 50 && bySize.size > 0,
      `${bySize.size} entries, ${bySize.bytes} bytes`,
    );
  });

  it('L1 expires before L2 when its TTL is shorter; the tiered cache then answers from L2', async () => {
    const prefix = testPrefix('l1ttl');
    prefixes.push(prefix);
    const keys = new ContextKeys(prefix);
    const clock = new FakeClock();
    const first = new L1Cache({ maxEntries: 10, maxBytes: 1 << 20, ttlMs: 30_000, now: clock.now });
    const tiered = new TieredContextCache({ l1: first, l2: redisL2(keys, clock) });
    await tiered.set(keys.ctx('u1'), alice);
    clock.advance(30_001);
    assert.equal(first.peek(keys.ctx('u1')), undefined);
    assert.deepEqual(await tiered.lookup(keys.ctx('u1')), { value: alice, tier: 'l2' });
    assert.deepEqual(await tiered.lookup(keys.ctx('u1')), { value: alice, tier: 'l1' }, 'refilled L1');
  });
});
