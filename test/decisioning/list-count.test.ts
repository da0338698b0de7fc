/**
 * A list's entry count (`ListStore.count`, read by `GET /api/lists`), on both stores: adds and removes move it, a
 * re-add does not; an expired entry stops counting in-process at once, and in Redis once a page has met it (the
 * count is the sorted set's size, documented as such).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { MemoryListStore, type ListStore } from '../../lib/decisioning/list-store';
import { RedisListStore } from '../../lib/decisioning/redis-list-store';
import { testRedis } from '../support/redis';
import { FakeClock } from '../support/clock';

const r = testRedis();
after(() => r.cleanup());

const stores: { name: string; make: (now: () => number) => ListStore }[] = [
  { name: 'in-process', make: (now) => new MemoryListStore(now) },
  { name: 'redis', make: (now) => new RedisListStore(r.redis, `${r.prefix}${Math.random()}:`, now) },
];

for (const { name, make } of stores)
  describe(`list count: ${name}`, () => {
    it('counts adds and removes; a re-add counts once; an expired entry stops counting once a page meets it', async () => {
      const clock = new FakeClock(1_000_000);
      const store = make(clock.now);
      assert.equal(await store.count('l'), 0);
      await store.add('l', ['a', 'b', 'c']);
      await store.add('l', ['a']);
      await store.add('l', ['d'], 10);
      assert.equal(await store.count('l'), 4);
      assert.equal(await store.remove('l', 'b'), true);
      assert.equal(await store.count('l'), 3);
      assert.equal(await store.count('other'), 0);
      clock.advance(11_000);
      await store.page('l', undefined, 100);
      assert.equal(await store.count('l'), 2);
      await store.dispose();
    });
  });
