/**
 * One contract for both list stores (real Redis at 127.0.0.1:6379 with a unique prefix, and in-process), and
 * propagation across two instances on one Redis: a change made through one reaches the other's L1.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ListLookup } from '../../lib/decisioning/list-lookup';
import { MemoryListStore, type ListChange, type ListStore } from '../../lib/decisioning/list-store';
import { RedisListStore } from '../../lib/decisioning/redis-list-store';
import { within } from '../support/eventually';
import { testRedis } from '../support/redis';
import { FakeClock } from '../support/clock';

const r = testRedis();
after(() => r.cleanup());

const stores: { name: string; make: (now: () => number) => ListStore }[] = [
  { name: 'in-process', make: (now) => new MemoryListStore(now) },
  { name: 'redis', make: (now) => new RedisListStore(r.redis, `${r.prefix}${Math.random()}:`, now) },
];

for (const { name, make } of stores) {
  describe(`list store contract: ${name}`, () => {
    it('adds, answers membership for many keys at once, and removes', async () => {
      const c = new FakeClock(1_800_000_000_000);
      const s = make(c.now);
      await s.add('blocked', ['a', 'b']);
      await s.add('devices', ['d1']);
      assert.deepEqual(
        await s.contains([
          { name: 'blocked', value: 'a' },
          { name: 'devices', value: 'a' },
          { name: 'devices', value: 'd1' },
          { name: 'blocked', value: 'zz' },
        ]),
        [true, false, true, false],
      );
      assert.equal(await s.remove('blocked', 'a'), true);
      assert.equal(await s.remove('blocked', 'a'), false);
      assert.deepEqual(await s.contains([{ name: 'blocked', value: 'a' }]), [false]);
      await s.dispose();
    });

    it('expires an entry after its TTL, and a re-add renews it', async () => {
      const c = new FakeClock(1_800_000_000_000);
      const s = make(c.now);
      await s.add('l', ['short'], 60);
      await s.add('l', ['forever']);
      c.advance(59_000);
      assert.deepEqual(await s.contains([{ name: 'l', value: 'short' }]), [true]);
      c.advance(2_000);
      assert.deepEqual(
        await s.contains([
          { name: 'l', value: 'short' },
          { name: 'l', value: 'forever' },
        ]),
        [false, true],
      );
      assert.deepEqual(
        (await s.page('l', undefined, 10)).entries.map((e) => e.value),
        ['forever'],
      );
      await s.add('l', ['short'], 60);
      assert.deepEqual(await s.contains([{ name: 'l', value: 'short' }]), [true]);
      assert.deepEqual(
        await s.memberUntil([
          { name: 'l', value: 'short' },
          { name: 'l', value: 'forever' },
          { name: 'l', value: 'absent' },
        ]),
        [c.now() + 60_000, Infinity, 0],
      );
      await s.dispose();
    });

    it('pages in value order with a cursor, bounded', async () => {
      const c = new FakeClock(1_800_000_000_000);
      const s = make(c.now);
      const values = Array.from({ length: 25 }, (_, i) => `v${String(i).padStart(2, '0')}`);
      await s.add('p', [...values].reverse(), 3600);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await s.page('p', cursor, 10);
        assert.ok(page.entries.length <= 10);
        for (const e of page.entries) {
          seen.push(e.value);
          assert.equal(e.expiresAt, c.now() + 3600_000);
        }
        cursor = page.cursor;
        pages++;
      } while (cursor !== undefined && pages < 10);
      assert.deepEqual(seen, values);
      assert.equal(pages, 3);
      await s.dispose();
    });

    it('announces every change to subscribers', async () => {
      const s = make(Date.now);
      const changes: ListChange[] = [];
      const got = new Promise<void>(
        (resolve) =>
          void s.subscribe((ch) => {
            changes.push(ch);
            if (changes.length === 2) resolve();
          }),
      );
      await s.subscribe(() => undefined); // resolves once subscribed
      await s.add('n', ['x', 'y']);
      await s.remove('n', 'x');
      await within(got, 'two change announcements', 5000);
      assert.deepEqual(changes, [
        { name: 'n', values: ['x', 'y'] },
        { name: 'n', values: ['x'] },
      ]);
      await s.dispose();
    });
  });
}

describe('lists across two instances on one Redis', () => {
  it('a value added through instance A is applied by instance B (pub/sub), replacing B cached "not a member"', async () => {
    const prefix = `${r.prefix}two:`;
    const a = new ListLookup(new RedisListStore(r.redis, prefix), { maxEntries: 100, ttlMs: 3_600_000 });
    const other = r.redis.duplicate();
    const applied: { name: string; values: number }[] = [];
    let onApplied: (() => void) | undefined;
    const b = new ListLookup(new RedisListStore(other, prefix), {
      maxEntries: 100,
      ttlMs: 3_600_000, // a long TTL: only the announcement can refresh B's cached answer
      on: { applied: (e) => (applied.push(e), onApplied?.()) },
    });
    assert.equal(await b.start(), true, 'B subscribed');
    const uses = [{ name: 'blocked_users', key: 'userId' as const }];
    const event = { userId: 'u-blocked-1' };
    assert.equal((await b.memberships(uses, event)).get('blocked_users'), false, 'B caches "not a member"');
    const seen = new Promise<void>((resolve) => (onApplied = resolve));
    await a.store.add('blocked_users', ['u-blocked-1']);
    await within(seen, "B's applied event for the change made through A", 5000);
    assert.deepEqual(applied, [{ name: 'blocked_users', values: 1 }]);
    assert.equal((await b.memberships(uses, event)).get('blocked_users'), true, 'B answers the new entry');

    const removed = new Promise<void>((resolve) => (onApplied = resolve));
    await a.store.remove('blocked_users', 'u-blocked-1');
    await within(removed, "B's applied event for the removal", 5000);
    assert.equal((await b.memberships(uses, event)).get('blocked_users'), false);
    await a.store.dispose();
    await b.store.dispose();
    other.disconnect();
  });
});

describe('list entry expiry through the L1 cache (real Redis)', () => {
  it('a value added with ttlSeconds: 4 no longer blocks 6 s later, on the instance that cached it and on another', async () => {
    const prefix = `${r.prefix}ttl:`;
    const c = new FakeClock(1_800_000_000_000);
    const fixed = (): number => 0; // the L1 TTL never runs out here: only the entry's expiry can end the match
    const other = r.redis.duplicate();
    const a = new ListLookup(new RedisListStore(r.redis, prefix, c.now), {
      maxEntries: 100,
      ttlMs: 3_600_000,
      now: fixed,
      wallNow: c.now,
    });
    const b = new ListLookup(new RedisListStore(other, prefix, c.now), {
      maxEntries: 100,
      ttlMs: 3_600_000,
      now: fixed,
      wallNow: c.now,
    });
    const uses = [{ name: 'blocked_users', key: 'userId' as const }];
    const event = { userId: 'u-ttl-1' };
    await a.store.add('blocked_users', ['u-ttl-1'], 4);
    assert.equal((await a.memberships(uses, event)).get('blocked_users'), true, 'A blocks (and caches) at once');
    assert.equal((await b.memberships(uses, event)).get('blocked_users'), true, 'B blocks (and caches) at once');
    c.advance(3_900);
    assert.equal((await a.memberships(uses, event)).get('blocked_users'), true, 'still blocked before 4 s');
    c.advance(2_100);
    assert.equal((await a.memberships(uses, event)).get('blocked_users'), false, 'A: not blocked 6 s later');
    assert.equal((await b.memberships(uses, event)).get('blocked_users'), false, 'B: not blocked 6 s later');
    await a.store.dispose();
    await b.store.dispose();
    other.disconnect();
  });
});
