import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  MemoryResultStore,
  RedisResultStore,
  type AsyncScoreResult,
  type ResultStore,
} from '../../lib/async/result-store';
import { testRedis } from '../support/redis';

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
      assert.equal(await make().store.get('nope'), undefined);
    });
    it('keeps the first result: first writer wins, later writers get it back', async () => {
      const { store } = make();
      const first = await store.putIfAbsent('t1', result('t1', 0.1));
      const second = await store.putIfAbsent('t1', result('t1', 0.9));
      assert.equal(first.score, 0.1);
      assert.deepEqual(second, first);
      assert.deepEqual(await store.get('t1'), first);
    });
    it('concurrent writers all get the same stored result', async () => {
      const { store } = make();
      const all = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.putIfAbsent('t2', result('t2', i / 20))),
      );
      assert.equal(new Set(all.map((r) => r.score)).size, 1);
    });
    it('forgets results after the TTL', async () => {
      const { store, expire } = make();
      await store.putIfAbsent('t3', result('t3', 0.5));
      await expire();
      assert.equal(await store.get('t3'), undefined);
    });
  });
}

// lru-cache treats a start time of 0 as "no TTL": the fake clock starts well above 0.
let now = 1_000_000;
contract('memory', () => {
  now = 1_000_000;
  return { store: new MemoryResultStore(60, 100, () => now), expire: () => Promise.resolve(void (now += 61_000)) };
});

const r = testRedis();
after(() => r.cleanup());
let n = 0;
contract('redis', () => {
  const prefix = `${r.prefix}${n++}:`;
  return {
    store: new RedisResultStore(r.redis, prefix, 3600),
    // Redis owns its TTL clock: expire the key explicitly (never sleep).
    expire: async () => {
      const keys = await r.redis.keys(`${prefix}*`);
      for (const k of keys) await r.redis.pexpire(k, 1);
      for (const k of keys) while ((await r.redis.exists(k)) === 1) await r.redis.ping(); // lapses within ~1 ms
    },
  };
});

describe('memory result store bounds', () => {
  it('holds at most maxEntries results', async () => {
    const store = new MemoryResultStore(60, 3);
    for (let i = 0; i < 10; i++) await store.putIfAbsent(`t${i}`, result(`t${i}`, 0));
    assert.equal(await store.get('t0'), undefined);
    assert.notEqual(await store.get('t9'), undefined);
  });
});
