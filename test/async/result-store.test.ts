import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  MemoryResultStore,
  RedisResultStore,
  type AsyncScoreResult,
  type CorruptRecord,
  type ResultStore,
} from '../../lib/async/result-store';
import { testRedis } from '../support/redis';
import { FakeClock } from '../support/clock';

function result(tx: string, score: number): AsyncScoreResult {
  return {
    transactionId: tx,
    score,
    decision: 'approve',
    reasons: [],
    model: { name: 'fraud', version: '1.0.0' },
    source: 'local',
    cache: 'miss',
    timing: { queueMs: 0, inferenceMs: 1, batchSize: 1 },
    scoredAt: '2026-11-30T10:00:00.000Z',
  };
}

/** One contract, every implementation. */
function contract(name: string, make: () => { store: ResultStore; expire: () => Promise<void> }): void {
  describe(`result store contract: ${name}`, () => {
    it('returns nothing for an unknown transaction', async () => {
      assert.deepEqual(await make().store.lookup('nope'), { result: undefined, published: false });
    });
    it('keeps the first result: first writer wins, later writers get it back', async () => {
      const { store } = make();
      const first = await store.putIfAbsent('t1', result('t1', 0.1));
      const second = await store.putIfAbsent('t1', result('t1', 0.9));
      assert.equal(first.score, 0.1);
      assert.deepEqual(second, first);
      assert.deepEqual(await store.lookup('t1'), { result: first, published: false });
    });
    it('records a confirmed publish next to the result', async () => {
      const { store } = make();
      const kept = await store.putIfAbsent('t4', result('t4', 0.2));
      await store.markPublished('t4');
      assert.deepEqual(await store.lookup('t4'), { result: kept, published: true });
      assert.deepEqual(await store.putIfAbsent('t4', result('t4', 0.7)), kept, 'still first writer wins');
    });
    it('concurrent writers all get the same stored result', async () => {
      const { store } = make();
      const all = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.putIfAbsent('t2', result('t2', i / 20))),
      );
      assert.equal(new Set(all.map((r) => r.score)).size, 1);
    });
    it('looks up and marks several transactions at once, each as its single lookup would', async () => {
      const { store } = make();
      const kept = await store.putIfAbsent('m1', result('m1', 0.3));
      await store.putIfAbsent('m2', result('m2', 0.4));
      await store.putIfAbsent('m3', result('m3', 0.5));
      await store.markManyPublished(['m2', 'm3']);
      const states = await store.lookupMany(['m1', 'm2', 'm3', 'm4']);
      assert.deepEqual(states, await Promise.all(['m1', 'm2', 'm3', 'm4'].map((tx) => store.lookup(tx))));
      assert.deepEqual(states[0], { result: kept, published: false });
      assert.deepEqual(
        states.map((s) => s.published),
        [false, true, true, false],
      );
      assert.equal(states[1]?.result?.score, 0.4);
      assert.deepEqual(await store.lookupMany([]), []);
    });
    it('forgets results after the TTL', async () => {
      const { store, expire } = make();
      await store.putIfAbsent('t3', result('t3', 0.5));
      await store.markPublished('t3');
      await expire();
      assert.deepEqual(await store.lookup('t3'), { result: undefined, published: false });
    });
  });
}

// lru-cache treats a start time of 0 as "no TTL": the fake clock starts well above 0.
const clock = new FakeClock();
contract('memory', () => {
  clock.t = 1_000_000;
  return { store: new MemoryResultStore(60, 100, clock.now), expire: () => Promise.resolve(clock.advance(61_000)) };
});

const r = testRedis();
after(() => r.cleanup());
let n = 0;
contract('redis', () => {
  const prefix = `${r.prefix}${n++}:`;
  return {
    store: new RedisResultStore(r.redis, prefix, 3600),
    // Redis owns its TTL clock: check that every key carries the TTL, then let them lapse (never sleep).
    expire: async () => {
      const keys = await r.redis.keys(`${prefix}*`);
      assert.ok(keys.length > 0);
      for (const k of keys) {
        const ttl = await r.redis.pttl(k);
        assert.ok(ttl > 0 && ttl <= 3600_000, `${k} expires within the TTL (pttl ${ttl})`);
        await r.redis.pexpire(k, 0); // a non-positive expiry deletes the key at once, as its lapse would
      }
    },
  };
});

describe('memory result store bounds', () => {
  it('holds at most maxEntries results', async () => {
    const store = new MemoryResultStore(60, 3);
    for (let i = 0; i < 10; i++) await store.putIfAbsent(`t${i}`, result(`t${i}`, 0));
    assert.equal((await store.lookup('t0')).result, undefined);
    assert.notEqual((await store.lookup('t9')).result, undefined);
  });
});

describe('redis result store: a corrupt record', () => {
  const cases: [string, string, CorruptRecord['reason']][] = [
    ['truncated JSON', '{"transactionId":"c1","score":0.', 'not_json'],
    ['another transaction', JSON.stringify(result('other', 0.1)), 'wrong_shape'],
    ['a non-finite score', JSON.stringify({ ...result('c1', 0.1), score: null }), 'wrong_shape'],
    ['an unknown decision', JSON.stringify({ ...result('c1', 0.1), decision: 'maybe' }), 'wrong_shape'],
  ];
  for (const [what, raw, reason] of cases)
    it(`(${what}) reads as absent, is reported without its value, deleted, and replaced by the next result`, async () => {
      const prefix = `${r.prefix}corrupt${n++}:`;
      const reports: CorruptRecord[] = [];
      const store = new RedisResultStore(r.redis, prefix, 3600, { onCorrupt: (e) => reports.push(e) });
      await r.redis.set(`${prefix}result:v1:c1`, raw, 'EX', 3600);
      assert.deepEqual(await store.lookup('c1'), { result: undefined, published: false });
      assert.deepEqual(reports, [{ transactionId: 'c1', reason, bytes: Buffer.byteLength(raw) }]);
      assert.equal(await r.redis.exists(`${prefix}result:v1:c1`), 0, 'deleted');
      await r.redis.set(`${prefix}result:v1:c1`, raw, 'EX', 3600); // corrupt again: putIfAbsent recovers too
      const fresh = result('c1', 0.3);
      assert.deepEqual(await store.putIfAbsent('c1', fresh), fresh);
      assert.deepEqual((await store.lookup('c1')).result, fresh);
      assert.equal(reports.length, 2);
    });
});
