/**
 * The in-process aggregate store: the shared contract, its bounds (entities, records per entity), and a property:
 * it equals a naive reference model (the list of payments) for random sequences of payments, times (clocks ahead
 * and behind included), retries and `where` outcomes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  BUCKETS,
  type AggregateInput,
  type AggregatePlan,
  type AggregateSpec,
} from '../../../lib/signals/aggregate-store';
import { MemoryAggregateStore } from '../../../lib/signals/memory-aggregate-store';
import { agg, HOUR, input, inputsOf, paymentSteps, planOf, PROPERTY_PLAN, T0 } from '../../contract/aggregate-fixtures';
import { aggregateStoreContract } from '../../contract/aggregate-store.contract';

aggregateStoreContract('in-process', () => new MemoryAggregateStore());

describe('MemoryAggregateStore bounds', () => {
  const plan = planOf({ key: ['ipAddress'], aggregates: [agg('c', 'count', HOUR)] });

  it('holds at most maxEntities entities, least recently used dropped first', async () => {
    const s = new MemoryAggregateStore({ maxEntities: 10 });
    for (let i = 0; i < 50; i++) await s.record(plan, input(plan, { at: T0 + i, entities: [`ip-${i}`] }));
    assert.equal(s.size, 10);
    assert.equal((await s.record(plan, input(plan, { at: T0 + 60, entities: ['ip-49'] })))[0], 2, 'recent: kept');
    assert.equal((await s.record(plan, input(plan, { at: T0 + 61, entities: ['ip-0'] })))[0], 1, 'oldest: dropped');
  });

  it('drops entities beyond maxBytes of estimated size', async () => {
    const s = new MemoryAggregateStore({ maxBytes: 20_000 });
    for (let i = 0; i < 200; i++) await s.record(plan, input(plan, { at: T0 + i, entities: [`ip-${i}`] }));
    assert.ok(s.size > 0 && s.size < 200, `${s.size} entities`);
  });

  it('keeps maxRecordsPerEntity records per entity: a retry of an older transaction counts again', async () => {
    const s = new MemoryAggregateStore({ maxRecordsPerEntity: 2 });
    const pay = async (tx: string, at: number) => (await s.record(plan, input(plan, { at, entities: ['hot'], tx })))[0];
    assert.equal(await pay('t1', T0), 1);
    assert.equal(await pay('t2', T0 + 1), 2);
    assert.equal(await pay('t3', T0 + 2), 3);
    assert.equal(await pay('t3', T0 + 3), 3, 'recent: answered from its record');
    assert.equal(await pay('t1', T0 + 4), 4, 't1 was forgotten: counted again');
  });

  it('keeps a hot entity to a fixed ring: 20 000 payments over 5 h, one distinct slot capped', async () => {
    const p = planOf({ key: ['ipAddress'], aggregates: [agg('users', 'distinct', HOUR, 25)] });
    const s = new MemoryAggregateStore({ maxBytes: 200_000, maxRecordsPerEntity: 100 });
    for (let i = 0; i < 20_000; i++)
      await s.record(p, input(p, { at: T0 + i * 900, entities: ['nat'], member: `user-${i}` }));
    assert.equal(s.size, 1, 'the hot entity stays within maxBytes (its estimate does not grow with payments)');
  });

  it('refuses a hash that does not return one fixed width', () => {
    let n = 0;
    assert.throws(() => new MemoryAggregateStore({ hash: (v) => `${v}${n++}` }), /fixed/);
  });
});

/** The naive model: every payment kept; each answer computed from the list. */
class ReferenceModel {
  private readonly log = new Map<string, { at: number; addends: (number | string | undefined)[] }[]>();
  private readonly answers = new Map<string, number[]>();

  record(plan: AggregatePlan, i: AggregateInput): number[] {
    const out = plan.aggregates.map(() => 0);
    plan.groups.forEach((g, gi) => {
      const e = i.entities[gi];
      if (e === undefined) return;
      const key = `${g.id}\u0001${e}`;
      const known = this.answers.get(`${key}\u0001${i.transactionId}`);
      if (known !== undefined) return g.aggregates.forEach((a, j) => (out[a] = known[j] as number));
      const addends = plan.aggregates.map((spec, a) =>
        i.counted[a] !== true
          ? undefined
          : spec.op === 'count'
            ? 1
            : spec.op === 'distinct'
              ? (i.values[a] as string | undefined)
              : (i.values[a] as number | undefined),
      );
      const log = this.log.get(key) ?? [];
      log.push({ at: i.at, addends });
      this.log.set(key, log);
      for (const a of g.aggregates) out[a] = this.value(plan, a, log, i.at);
      this.answers.set(
        `${key}\u0001${i.transactionId}`,
        g.aggregates.map((a) => out[a] as number),
      );
    });
    return out;
  }

  /**
   * A payment is in the window at `at` when its bucket is in [cur − BUCKETS, cur] and no other counted payment so
   * far has a later bucket in the same slot (it replaced it, or it was there first and this one was dropped).
   */
  private value(plan: AggregatePlan, a: number, log: { at: number; addends: unknown[] }[], at: number): number {
    const spec = plan.aggregates[a] as AggregateSpec;
    const b = (t: number) => Math.floor(t / spec.bucketMs);
    const cur = b(at);
    const counted = log.filter((p) => p.addends[a] !== undefined);
    const inside = counted.filter(
      (p) =>
        b(p.at) >= cur - BUCKETS &&
        b(p.at) <= cur &&
        !counted.some((q) => b(q.at) > b(p.at) && (b(q.at) - b(p.at)) % (BUCKETS + 1) === 0),
    );
    const xs = inside.map((p) => p.addends[a]);
    const sum = xs.reduce<number>((s, x) => s + (x as number), 0);
    switch (spec.op) {
      case 'count':
        return xs.length;
      case 'sum':
        return sum;
      case 'avg':
        return xs.length === 0 ? 0 : sum / xs.length;
      case 'max':
        return xs.length === 0 ? 0 : Math.max(...(xs as number[]));
      case 'distinct':
        return Math.min(new Set(xs).size, spec.cap);
    }
  }
}

describe('MemoryAggregateStore equals the reference model (property)', () => {
  it('for random payments, times, retries and where outcomes', async () => {
    await fc.assert(
      fc.asyncProperty(paymentSteps, async (steps) => {
        const store = new MemoryAggregateStore();
        const ref = new ReferenceModel();
        for (const [k, i] of inputsOf(steps).entries()) {
          const want = ref.record(PROPERTY_PLAN, i);
          assert.deepEqual([...(await store.record(PROPERTY_PLAN, i))], want, `payment ${k}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});
