/**
 * What the pipeline reads of the signals rollout: the candidate for its canary share of users (its own salt), the
 * active version otherwise; the aggregate plan is the union of both versions' aggregates (deduplicated by spec id),
 * each version reads its own values back from the union's, and a payment's input is both versions' merged. Swaps
 * replace the snapshot, never change one a payment holds.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { AggregateInput, AggregateSpec, KeyGroup } from '../../lib/signals/aggregate-store';
import type { CompiledSignals } from '../../lib/signals/compiled-signals';
import { ServedSignals, SignalsServing } from '../../lib/signals/signals-serving';
import { SIGNALS_TRAFFIC } from '../../lib/signals/signals-traffic';
import type { KeyField } from '../../lib/signals/signals-document';

/** A pool of aggregate definitions: `a{i}`, keyed by one of three fields. */
const KEYS: readonly KeyField[] = ['userId', 'cardFingerprint', 'ipAddress'];
const spec = (i: number): AggregateSpec => ({
  name: `a${i}`,
  id: `id${i}`,
  op: 'count',
  windowMs: 3_600_000,
  bucketMs: 300_000,
  cap: 0,
});
const keyOf = (i: number): KeyField => KEYS[i % KEYS.length] as KeyField;

/** A compiled version with the pool's aggregates `ids`, in that order; its input names each aggregate by id. */
function version(v: string, ids: readonly number[]): CompiledSignals {
  const aggregates = ids.map(spec);
  const groups: KeyGroup[] = [];
  ids.forEach((id, i) => {
    const k = keyOf(id);
    let g = groups.find((x) => x.id === k);
    if (g === undefined) groups.push((g = { id: k, key: [k], aggregates: [] }));
    (g.aggregates as number[]).push(i);
  });
  const names = aggregates.map((a) => a.name);
  return {
    name: 'default',
    version: v,
    document: { schemaVersion: 1, name: 'default', version: v, aggregates: [], features: [] },
    names,
    indexOf: (n) => (names.includes(n) ? names.indexOf(n) : undefined),
    definition: () => undefined,
    plan: { aggregates, groups },
    aggregateInput: (_e, transactionId, at): AggregateInput => ({
      transactionId,
      at,
      entities: groups.map((g) => `entity-${g.id}`),
      counted: ids.map((id) => id % 2 === 0),
      values: ids.map((id) => `value-${id}`),
    }),
    compute: () => undefined,
    projection: () => () => undefined,
  };
}

const event = {} as never;

describe('signals serving', () => {
  it('without a candidate the plan is the active version its own, and its values are the store answer itself', () => {
    const active = version('1.0.0', [0, 1, 2]);
    const s = new ServedSignals(active);
    assert.equal(s.plan, active.plan);
    const union = new Float64Array([1, 2, 3]);
    assert.equal(s.valuesFor('1.0.0', union), union);
    assert.equal(s.forUser('anyone'), active);
    assert.equal(s.shadowFor('anyone', 'tx'), undefined);
    const input = s.aggregateInput(event, 'tx-1', 5);
    assert.deepEqual(input.entities, ['entity-userId', 'entity-cardFingerprint', 'entity-ipAddress']);
  });

  it('the union plan holds every aggregate of both once; each version reads its own order back', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 20 }), { maxLength: 12 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 20 }), { maxLength: 12 }),
        (a, c) => {
          const active = version('1.0.0', a);
          const candidate = version('1.1.0', c);
          const s = new ServedSignals(active, candidate, { candidate: '1.1.0', canaryPercent: 10, shadowPercent: 0 });
          const ids = s.plan.aggregates.map((x) => x.id);
          assert.equal(new Set(ids).size, ids.length, 'deduplicated by spec id');
          assert.deepEqual(new Set(ids), new Set([...a, ...c].map((i) => `id${i}`)));
          assert.deepEqual(
            ids.slice(0, a.length),
            a.map((i) => `id${i}`),
            "the active version's first",
          );
          // every group holds exactly the aggregates of its key, each once
          const grouped = s.plan.groups.flatMap((g) => g.aggregates.map((i) => [g.id, i] as const));
          assert.equal(grouped.length, ids.length);
          for (const [k, i] of grouped) assert.equal(keyOf(Number(ids[i]?.slice(2))), k);
          // the store answers, per union aggregate, a value that names it
          const union = Float64Array.from(s.plan.aggregates, (x) => Number(x.id.slice(2)) + 0.5);
          for (const [v, own] of [[active, a] as const, [candidate, c] as const]) {
            const got = s.valuesFor(v.version, union, new Float64Array(own.length));
            assert.deepEqual(
              [...got],
              own.map((i) => i + 0.5),
              v.version,
            );
            assert.deepEqual(
              [...s.valuesFor(v.version, union)],
              own.map((i) => i + 0.5),
              `${v.version} (no out)`,
            );
          }
          // the input of a payment: each union aggregate's part from the version that has it
          const input = s.aggregateInput(event, 'tx', 1);
          assert.deepEqual(
            input.values,
            s.plan.aggregates.map((x) => `value-${x.id.slice(2)}`),
          );
          assert.deepEqual(
            input.counted,
            s.plan.aggregates.map((x) => Number(x.id.slice(2)) % 2 === 0),
          );
          assert.deepEqual(
            input.entities,
            s.plan.groups.map((g) => `entity-${g.id}`),
          );
        },
      ),
    );
  });

  it('the candidate serves its canary share of users (its own salt) and runs in shadow for the others', () => {
    const active = version('1.0.0', [0]);
    const candidate = version('1.1.0', [0, 1]);
    const s = new ServedSignals(active, candidate, { candidate: '1.1.0', canaryPercent: 25, shadowPercent: 100 });
    let canary = 0;
    for (let i = 0; i < 400; i++) {
      const user = `user-${i}`;
      const inCanary = SIGNALS_TRAFFIC.inCanary(user, 25);
      canary += inCanary ? 1 : 0;
      assert.equal(s.forUser(user), inCanary ? candidate : active);
      assert.equal(
        s.shadowFor(user, `tx-${i}`),
        inCanary ? undefined : candidate,
        'shadow only where it does not serve',
      );
    }
    assert.ok(canary > 60 && canary < 140, `about a quarter: ${canary}`);
    assert.throws(() => s.valuesFor('2.0.0', new Float64Array(2)), /not served/);
  });

  it('swaps replace the snapshot; the candidate stays until it is the active version or ends', () => {
    const serving = new SignalsServing(version('1.0.0', [0]));
    const held = serving.current;
    const candidate = version('1.1.0', [0, 1]);
    serving.setCandidate(candidate, { candidate: '1.1.0', canaryPercent: 50, shadowPercent: 0 });
    assert.equal(held.candidate, undefined, 'a payment keeps the snapshot it took');
    assert.equal(serving.current.plan.aggregates.length, 2);
    const same = serving.current;
    serving.setCandidate(candidate, { candidate: '1.1.0', canaryPercent: 50, shadowPercent: 0 });
    assert.equal(serving.current, same, 'the same split changes nothing');
    assert.equal(serving.swap(version('1.0.1', [2])), true);
    assert.equal(serving.candidate, candidate, 'another active version keeps the candidate');
    assert.equal(serving.current.plan.aggregates.length, 3);
    serving.swap(candidate);
    assert.deepEqual([serving.active?.version, serving.candidate], ['1.1.0', undefined]);
    assert.equal(serving.swap(candidate), false);
    serving.setCandidate(undefined, undefined);
  });
});
