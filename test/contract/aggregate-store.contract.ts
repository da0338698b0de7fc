/**
 * One contract suite for the aggregate stores (in process, Redis with one script per entity or per payment), run
 * by test/unit/signals/memory-aggregate-store.test.ts and test/integration/redis-aggregate-store.test.ts. Plans
 * are built by hand; time is the payment's injected `at`. Covers each op, windows and the sawtooth edge, `where`
 * (counted = false), an absent entity, the distinct cap, retries, concurrent payments, composite keys and two plans
 * sharing an aggregate.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BUCKETS,
  type AggregateInput,
  type AggregatePlan,
  type AggregateStore,
} from '../../lib/signals/aggregate-store';
import { agg, DAY, entity, HOUR, input, MIN, planOf, T0 } from './aggregate-fixtures';

/** The contract, for stores made by `make` (a fresh store per call; cleanup is the caller's). */
export function aggregateStoreContract(name: string, make: () => AggregateStore): void {
  describe(`aggregate store contract: ${name}`, () => {
    const all = planOf({
      key: ['userId'],
      aggregates: [
        agg('c1h', 'count', HOUR),
        agg('s1h', 'sum', HOUR),
        agg('a1h', 'avg', HOUR),
        agg('m1h', 'max', HOUR),
        agg('d1h', 'distinct', HOUR),
      ],
    });
    const values = async (s: AggregateStore, plan: AggregatePlan, i: AggregateInput) => [...(await s.record(plan, i))];

    it('answers every op over its window, including the payment itself', async () => {
      const s = make();
      const u = entity('user');
      const one = (at: number, amount: number, member: string) =>
        values(s, all, input(all, { at, entities: [u], amount, member }));
      assert.deepEqual(await one(T0, 10, 'a'), [1, 10, 10, 10, 1]);
      assert.deepEqual(await one(T0 + MIN, 30, 'b'), [2, 40, 20, 30, 2]);
      assert.deepEqual(await one(T0 + 20 * MIN, 20, 'a'), [3, 60, 20, 30, 2], 'a repeated member counts once');
      assert.deepEqual(await one(T0 + 59 * MIN, 2.5, 'c'), [4, 62.5, 15.625, 30, 3]);
    });

    it('reads 0 for a first payment that is not counted, and avg/max of no payment are 0', async () => {
      const s = make();
      const none = all.aggregates.map(() => false);
      assert.deepEqual(
        await values(s, all, input(all, { at: T0, entities: [entity('u')], counted: none })),
        [0, 0, 0, 0, 0],
      );
    });

    it('counts only payments whose where holds (counted), and still answers the others', async () => {
      const s = make();
      const u = entity('user');
      const plan = planOf({ key: ['userId'], aggregates: [agg('all', 'count', HOUR), agg('declined', 'count', HOUR)] });
      const pay = (at: number, declined: boolean) =>
        values(s, plan, input(plan, { at, entities: [u], counted: [true, declined] }));
      assert.deepEqual(await pay(T0, false), [1, 0]);
      assert.deepEqual(await pay(T0 + 1, true), [2, 1]);
      assert.deepEqual(await pay(T0 + 2, false), [3, 1]);
    });

    it('does not count a sum/avg/max/distinct payment whose value is missing', async () => {
      const s = make();
      const u = entity('user');
      await s.record(all, input(all, { at: T0, entities: [u], amount: 4, member: 'x' }));
      const v = await values(
        s,
        all,
        input(all, { at: T0 + 1, entities: [u], values: all.aggregates.map(() => undefined) }),
      );
      assert.deepEqual(v, [2, 4, 4, 4, 1]);
    });

    it('reads 0s for a group whose entity is absent and records nothing for it', async () => {
      const s = make();
      const plan = planOf(
        { key: ['userId'], aggregates: [agg('u-count', 'count', HOUR)] },
        { key: ['email'], aggregates: [agg('e-count', 'count', HOUR), agg('e-sum', 'sum', HOUR)] },
      );
      const u = entity('user');
      const e = entity('mail');
      assert.deepEqual(await values(s, plan, input(plan, { at: T0, entities: [u, undefined] })), [1, 0, 0]);
      assert.deepEqual(await values(s, plan, input(plan, { at: T0 + 1, entities: [undefined, e] })), [0, 1, 10]);
      assert.deepEqual(await values(s, plan, input(plan, { at: T0 + 2, entities: [u, e] })), [2, 2, 20]);
      assert.deepEqual(await values(s, plan, input(plan, { at: T0 + 3, entities: [undefined, undefined] })), [0, 0, 0]);
    });

    const bucket = HOUR / BUCKETS;
    for (const [edge, at, lastIn] of [
      ['at the start of its bucket: W + W/BUCKETS', T0, T0 + HOUR + bucket - 1],
      ['at the end of its bucket: exactly W', T0 + bucket - 1, T0 + bucket - 1 + HOUR],
    ] as const) {
      it(`keeps a payment stamped ${edge} (sawtooth), then drops it`, async () => {
        const s = make();
        const plan = planOf({ key: ['userId'], aggregates: [agg('c', 'count', HOUR)] });
        const u = entity('user');
        await s.record(plan, input(plan, { at, entities: [u] }));
        const probe = async (t: number) =>
          (await s.record(plan, input(plan, { at: t, entities: [u], counted: [false] })))[0];
        assert.equal(await probe(lastIn), 1, `${lastIn - at} ms later: inside`);
        assert.equal(await probe(lastIn + 1), 0, `${lastIn + 1 - at} ms later: outside`);
      });
    }

    it('keeps windows of one key apart (15 min, 1 h, 24 h)', async () => {
      const s = make();
      const plan = planOf({
        key: ['cardFingerprint'],
        aggregates: [agg('c15', 'count', 15 * MIN), agg('c1h', 'count', HOUR), agg('s24', 'sum', DAY)],
      });
      const card = entity('card');
      const at = [T0, T0 + 10 * MIN, T0 + 40 * MIN, T0 + 3 * HOUR, T0 + 3 * HOUR + 14 * MIN];
      const got: number[][] = [];
      for (const t of at) got.push(await values(s, plan, input(plan, { at: t, entities: [card], amount: 1 })));
      assert.deepEqual(got, [
        [1, 1, 1],
        [2, 2, 2],
        [1, 3, 3],
        [1, 1, 4],
        [2, 2, 5],
      ]);
    });

    it('counts distinct values exactly up to the cap, across buckets', async () => {
      const s = make();
      const plan = planOf({ key: ['deviceId'], aggregates: [agg('cards', 'distinct', HOUR, 3)] });
      const d = entity('device');
      const pay = async (at: number, member: string) =>
        (await s.record(plan, input(plan, { at, entities: [d], member })))[0];
      assert.equal(await pay(T0, 'card-a'), 1);
      assert.equal(await pay(T0 + 10 * MIN, 'card-a'), 1, 'the same member in another bucket counts once');
      assert.equal(await pay(T0 + 20 * MIN, 'card-b'), 2);
      assert.equal(await pay(T0 + 21 * MIN, 'card-c'), 3);
      assert.equal(await pay(T0 + 22 * MIN, 'card-d'), 3, 'stops at the cap');
      assert.equal(await pay(T0 + 60 * MIN, 'card-e'), 3, 'the full bucket of b, c, d is still in the window');
      assert.equal(await pay(T0 + 85 * MIN, 'card-f'), 2, 'only e and f left');
    });

    it('reads the cap when one bucket reached it, though later buckets hold fewer', async () => {
      const s = make();
      const plan = planOf({ key: ['ipAddress'], aggregates: [agg('users', 'distinct', HOUR, 4)] });
      const ip = entity('ip');
      for (let i = 0; i < 10; i++) await s.record(plan, input(plan, { at: T0 + i, entities: [ip], member: `u${i}` }));
      const later = await s.record(plan, input(plan, { at: T0 + 30 * MIN, entities: [ip], member: 'u-late' }));
      assert.equal(later[0], 4);
    });

    it('answers a retried transaction id with its first answer and counts it once', async () => {
      const s = make();
      const u = entity('user');
      await s.record(all, input(all, { at: T0, entities: [u], amount: 5, member: 'a' }));
      const first = await values(
        s,
        all,
        input(all, { at: T0 + 1000, entities: [u], tx: 'dup', amount: 7, member: 'b' }),
      );
      const again = await values(
        s,
        all,
        input(all, { at: T0 + 5000, entities: [u], tx: 'dup', amount: 999, member: 'z' }),
      );
      assert.deepEqual(again, first);
      const next = await values(s, all, input(all, { at: T0 + 6000, entities: [u], amount: 1, member: 'a' }));
      assert.deepEqual(next, [3, 13, 13 / 3, 7, 2], 'dup counted once, with its first amount and member');
    });

    it('gives N concurrent payments of one entity the counts 1..N, each a consistent prefix', async () => {
      const s = make();
      const plan = planOf({ key: ['ipAddress'], aggregates: [agg('c', 'count', HOUR), agg('s', 'sum', HOUR)] });
      const ip = entity('ip');
      const n = 40;
      const answers = await Promise.all(
        Array.from({ length: n }, (_, i) => s.record(plan, input(plan, { at: T0 + i, entities: [ip], amount: 1 }))),
      );
      const counts = answers.map((a) => a[0] as number).sort((x, y) => x - y);
      assert.deepEqual(
        counts,
        Array.from({ length: n }, (_, i) => i + 1),
      );
      for (const a of answers) assert.equal(a[1], a[0], 'the sum (1 per payment) matches the count it was read with');
    });

    it('keeps the entities of a composite key apart', async () => {
      const s = make();
      const plan = planOf({ key: ['cardFingerprint', 'merchantId'], aggregates: [agg('cm', 'count', DAY)] });
      const card = entity('card');
      const count = async (merchant: string, at: number) =>
        (await s.record(plan, input(plan, { at, entities: [`${card}\u0000${merchant}`] })))[0];
      assert.equal(await count('m1', T0), 1);
      assert.equal(await count('m1', T0 + 1), 2);
      assert.equal(await count('m2', T0 + 2), 1);
      assert.equal(await count('m1', T0 + 3), 3);
    });

    it('shares the counts of an aggregate id between plans; a new id starts at 0', async () => {
      const s = make();
      const shared = agg('shared-count', 'count', HOUR);
      const a = planOf({ key: ['userId'], aggregates: [shared] });
      const b = planOf({ key: ['userId'], aggregates: [agg('b-only', 'sum', HOUR), shared] });
      const u = entity('user');
      await s.record(a, input(a, { at: T0, entities: [u] }));
      await s.record(a, input(a, { at: T0 + 1, entities: [u], tx: 'both' }));
      assert.deepEqual([...(await s.record(b, input(b, { at: T0 + 2, entities: [u], amount: 4 })))], [4, 3]);
      assert.deepEqual(
        [...(await s.record(b, input(b, { at: T0 + 3, entities: [u], tx: 'both', amount: 6 })))],
        [10, 2],
        'a transaction recorded by another plan: its shared aggregate keeps its answer, the new one counts it',
      );
      assert.deepEqual([...(await s.record(a, input(a, { at: T0 + 4, entities: [u] })))], [4]);
    });

    it('keeps groups of one plan apart even when their values are equal', async () => {
      const s = make();
      const plan = planOf(
        { key: ['userId'], aggregates: [agg('u', 'count', HOUR)] },
        { key: ['deviceId'], aggregates: [agg('d', 'count', HOUR)] },
      );
      const same = entity('same');
      await s.record(plan, input(plan, { at: T0, entities: [same, undefined] }));
      assert.deepEqual([...(await s.record(plan, input(plan, { at: T0 + 1, entities: [same, same] })))], [2, 1]);
    });

    it('does not count a payment stamped before a bucket that replaced its own (a clock far behind)', async () => {
      const s = make();
      const plan = planOf({ key: ['userId'], aggregates: [agg('c', 'count', HOUR)] });
      const u = entity('user');
      await s.record(plan, input(plan, { at: T0 + HOUR + bucket, entities: [u] }));
      const stale = await s.record(plan, input(plan, { at: T0, entities: [u] }));
      assert.equal(stale[0], 0, 'its slot holds a later bucket: not counted, and the later one is not in its window');
      assert.equal((await s.record(plan, input(plan, { at: T0 + HOUR + bucket + 1, entities: [u] })))[0], 2);
    });
  });
}
