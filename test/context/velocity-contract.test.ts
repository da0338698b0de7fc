/**
 * One contract suite for velocity stores (Redis Lua script, in-process), with an injected clock: window
 * edges, trimming, idempotency per transactionId, bounds; and a property test that both implementations
 * agree with a reference model.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { ContextKeys } from '../../lib/context/keys';
import { RedisVelocityStore } from '../../lib/context/redis-velocity';
import {
  figuresOf,
  MemoryVelocityStore,
  NO_FIGURES,
  WINDOW_MS,
  type PaymentRecord,
  type VelocityStore,
} from '../../lib/context/velocity';
import { cleanup, testClient, testPrefix } from './support';

let client: Redis;
const prefixes: string[] = [];
before(async () => {
  client = await testClient();
});
after(async () => {
  for (const p of prefixes) await cleanup(client, p);
  client.disconnect();
});

const STORES: Record<string, (maxEventsPerUser?: number) => VelocityStore> = {
  'Redis (Lua)': (max) => {
    const prefix = testPrefix('vel');
    prefixes.push(prefix);
    return new RedisVelocityStore(client, {
      keys: new ContextKeys(prefix),
      ...(max === undefined ? {} : { maxEventsPerUser: max }),
    });
  },
  'in-process': (max) => new MemoryVelocityStore(max === undefined ? {} : { maxEventsPerUser: max }),
};

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
let seq = 0;
const pay = (at: number, over: Partial<PaymentRecord> = {}): PaymentRecord => ({
  userId: 'u1',
  transactionId: `tx-${++seq}`,
  amount: 10,
  country: 'FR',
  at,
  ...over,
});

for (const [name, make] of Object.entries(STORES)) {
  describe(`velocity contract: ${name}`, () => {
    it('reports no velocity for a first payment, and excludes the current payment', async () => {
      const s = make();
      assert.deepEqual(await s.record(pay(T0)), NO_FIGURES);
      const f = await s.record(pay(T0 + 1));
      assert.equal(f.count1m, 1);
    });

    for (const [w, ms, field] of [
      ['1 min', WINDOW_MS.m1, 'count1m'],
      ['1 h', WINDOW_MS.h1, 'count1h'],
      ['24 h', WINDOW_MS.d1, 'count24h'],
    ] as const) {
      it(`counts a payment in the ${w} window until exactly ${ms} ms have passed`, async () => {
        const s = make();
        await s.record(pay(T0, { amount: 7.5 }));
        const inside = await s.record(pay(T0 + ms - 1));
        assert.equal(inside[field], 1, `${ms - 1} ms later: inside`);
        const s2 = make();
        await s2.record(pay(T0, { amount: 7.5 }));
        const outside = await s2.record(pay(T0 + ms));
        assert.equal(outside[field], 0, `${ms} ms later: outside`);
      });
    }

    it('sums amounts per window and counts distinct countries over 24 h', async () => {
      const s = make();
      await s.record(pay(T0, { amount: 100, country: 'FR' }));
      await s.record(pay(T0 + 2 * WINDOW_MS.h1, { amount: 20.25, country: 'DE' }));
      await s.record(pay(T0 + 2 * WINDOW_MS.h1 + 50_000, { amount: 5.5, country: 'FR' }));
      const f = await s.record(pay(T0 + 2 * WINDOW_MS.h1 + 70_000, { country: 'US' }));
      assert.deepEqual(f, {
        count1m: 1,
        count1h: 2,
        count24h: 3,
        sum1m: 5.5,
        sum1h: 25.75,
        sum24h: 125.75,
        distinctCountries24h: 2,
      });
    });

    it('trims payments older than 24 h for good', async () => {
      const s = make();
      await s.record(pay(T0, { country: 'NG' }));
      await s.record(pay(T0 + WINDOW_MS.d1 + 5));
      const f = await s.record(pay(T0 + 1000, { transactionId: 'late-clock' }));
      assert.equal(f.count24h, 1, 'the trimmed payment does not come back for a skewed clock');
      assert.equal(f.distinctCountries24h, 1);
    });

    it('counts a transaction once, and answers a repeat with the same figures', async () => {
      const s = make();
      await s.record(pay(T0));
      const first = await s.record(pay(T0 + 1000, { transactionId: 'dup' }));
      const again = await s.record(pay(T0 + 5000, { transactionId: 'dup', amount: 999 }));
      assert.deepEqual(again, first);
      const next = await s.record(pay(T0 + 6000));
      assert.equal(next.count1m, 2, 'dup counted once');
      assert.equal(next.sum24h, 20);
    });

    it('keeps users apart', async () => {
      const s = make();
      await s.record(pay(T0, { userId: 'a' }));
      assert.equal((await s.record(pay(T0 + 1, { userId: 'b' }))).count1m, 0);
    });

    it('keeps at most maxEventsPerUser payments, dropping the oldest', async () => {
      const s = make(3);
      for (let i = 0; i < 5; i++) await s.record(pay(T0 + i * 1000, { amount: i + 1 }));
      const f = await s.record(pay(T0 + 10_000));
      assert.equal(f.count1m, 3);
      assert.equal(f.sum1m, 3 + 4 + 5);
    });
  });
}

describe('velocity stores agree with the reference model (property)', () => {
  const step = fc.record({
    // mostly forwards; sometimes backwards (an instance whose clock is behind another's)
    dt: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 1, max: 90_000 }),
      fc.integer({ min: 1, max: 2 * WINDOW_MS.h1 }),
      fc.constant(WINDOW_MS.d1),
      fc.integer({ min: -120_000, max: -1 }),
    ),
    repeat: fc.nat(8),
    amount: fc.integer({ min: 1, max: 100_000 }).map((c) => c / 100),
    country: fc.constantFrom('FR', 'DE', 'US', 'NG'),
  });
  type Stored = { at: number; amount: number; country: string; f: ReturnType<typeof figuresOf> };
  const check = (max: number | undefined) =>
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
      const redis = STORES['Redis (Lua)']?.(max) as VelocityStore;
      const memory = new MemoryVelocityStore(max === undefined ? {} : { maxEventsPerUser: max });
      const model = new Map<string, Stored>();
      let at = T0;
      const ids: string[] = [];
      for (const [i, st] of steps.entries()) {
        at += st.dt;
        const id = st.repeat < ids.length && st.repeat < 2 ? (ids[st.repeat] as string) : `t${i}`;
        ids.push(id);
        const p: PaymentRecord = { userId: 'p', transactionId: id, amount: st.amount, country: st.country, at };
        let expected = model.get(id)?.f;
        if (expected === undefined) {
          for (const [k, v] of model) if (v.at <= at - WINDOW_MS.d1) model.delete(k);
          expected = figuresOf(model.values(), at);
          model.set(id, { at, amount: p.amount, country: p.country, f: expected });
          const order = [...model].sort(([ia, a], [ib, b]) => a.at - b.at || (ia < ib ? -1 : ia > ib ? 1 : 0));
          for (const [k] of order.slice(0, Math.max(0, model.size - (max ?? Infinity)))) model.delete(k);
        }
        assert.deepEqual(await redis.record(p), expected, `redis, step ${i}`);
        assert.deepEqual(await memory.record(p), expected, `in-process, step ${i}`);
      }
    });
  it('same figures from Redis, in-process and the model, for random payment sequences (clocks may step back)', async () => {
    await fc.assert(check(undefined), { numRuns: 60 });
  });
  it('same figures with a small per-user bound', async () => {
    await fc.assert(check(4), { numRuns: 40 });
  });
});
