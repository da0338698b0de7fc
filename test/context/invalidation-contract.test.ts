/** One contract suite for invalidation buses (Redis pub/sub, in-process hub); plus single-flight. */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Invalidation, InvalidationBus } from '../../lib/context/invalidation';
import { MemoryInvalidationHub, RedisInvalidationBus } from '../../lib/context/invalidation';
import { SingleFlight } from '../../lib/context/single-flight';
import { eventually, testClient, testPrefix } from './support';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Three instances' buses on one channel. */
const FACTORIES: Record<string, () => Promise<[InvalidationBus, InvalidationBus, InvalidationBus]>> = {
  'Redis pub/sub': async () => {
    const channel = `${testPrefix('bus')}invalidate`;
    const make = async () => {
      const pub = await testClient();
      const bus = new RedisInvalidationBus(
        pub,
        pub.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null }),
        channel,
      );
      await bus.start();
      cleanups.push(async () => (await bus.dispose(), pub.disconnect()));
      return bus;
    };
    return [await make(), await make(), await make()];
  },
  'in-process hub': () => {
    const hub = new MemoryInvalidationHub();
    return Promise.resolve([hub.bus(), hub.bus(), hub.bus()]);
  },
};

for (const [name, make] of Object.entries(FACTORIES)) {
  describe(`invalidation bus contract: ${name}`, () => {
    it('delivers a key or user invalidation to the other instances, not back to the publisher', async () => {
      const [a, b] = await make();
      const got: { a: Invalidation[]; b: Invalidation[] } = { a: [], b: [] };
      a.subscribe({ invalidate: (m) => got.a.push(m), resync: () => undefined });
      b.subscribe({ invalidate: (m) => got.b.push(m), resync: () => undefined });
      await a.publish({ userId: 'u1', key: 'k1' });
      await a.publish({ userId: 'u2' });
      await eventually(() => got.b.length === 2, 3000, 'delivery');
      assert.deepEqual(got.b, [
        { origin: a.origin, userId: 'u1', key: 'k1' },
        { origin: a.origin, userId: 'u2' },
      ]);
      await b.publish({ userId: 'u3' });
      await eventually(() => got.a.length === 1, 3000, 'delivery back');
      assert.deepEqual(got.a, [{ origin: b.origin, userId: 'u3' }]);
      assert.equal(got.b.length, 2, 'no echo');
    });

    it('stops delivering after dispose', async () => {
      const [a, b, c] = await make();
      const got: Invalidation[] = [];
      const live: Invalidation[] = [];
      b.subscribe({ invalidate: (m) => got.push(m), resync: () => undefined });
      c.subscribe({ invalidate: (m) => live.push(m), resync: () => undefined });
      await b.dispose();
      await a.publish({ userId: 'u1' });
      // a sentinel after the message that must not arrive: each publish reaches every subscriber before
      // the next one (one Redis channel, one hub), so once the live bus has the sentinel, a disposed bus
      // that still delivered would have had u1 too
      await a.publish({ userId: 'sentinel' });
      await eventually(() => live.some((m) => m.userId === 'sentinel'), 3000, 'the sentinel on the live bus');
      assert.deepEqual(
        live.map((m) => m.userId),
        ['u1', 'sentinel'],
      );
      assert.deepEqual(got, []);
    });
  });
}

describe('single-flight', () => {
  it('shares one call among concurrent callers, including its failure, then calls again', async () => {
    const f = new SingleFlight<number>();
    let calls = 0;
    let release: (v: number) => void = () => undefined;
    const slow = () => (calls++, new Promise<number>((r) => (release = r)));
    const all = Promise.all(Array.from({ length: 100 }, () => f.run('k', slow)));
    assert.equal(f.size, 1);
    release(7);
    assert.deepEqual(new Set(await all), new Set([7]));
    assert.equal(calls, 1);
    assert.equal(f.size, 0);
    const failing = () => (calls++, Promise.reject(new Error('origin down')));
    const results = await Promise.allSettled([f.run('k', failing), f.run('k', failing)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.equal(calls, 2, 'one call for both');
    assert.equal(await f.run('k', () => Promise.resolve(9)), 9, 'a failure is not cached');
  });
});
