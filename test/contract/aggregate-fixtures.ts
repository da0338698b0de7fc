/**
 * Plans, payments and random payment sequences for the aggregate store tests (test/contract/aggregate-store.contract.ts,
 * test/unit/signals/memory-aggregate-store.test.ts, test/integration/redis-aggregate-store.test.ts). Plans are built
 * by hand as the signals compiler would build them; time is the payment's injected `at`.
 */
import fc from 'fast-check';
import {
  BUCKETS,
  type AggregateInput,
  type AggregatePlan,
  type AggregateSpec,
} from '../../lib/signals/aggregate-store';
import type { AggregateOp, KeyField } from '../../lib/signals/signals-document';

export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;
/** A time on a bucket boundary of every window used here. */
export const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** An aggregate as the compiler would build it (`name` = `id`). */
export function agg(id: string, op: AggregateOp, windowMs: number, cap = 25): AggregateSpec {
  return { name: id, id, op, windowMs, bucketMs: windowMs / BUCKETS, cap: op === 'distinct' ? cap : 0 };
}

/** A plan of groups, each with its key fields and aggregates (indexes assigned in order). */
export function planOf(...groups: { key: KeyField[]; aggregates: AggregateSpec[] }[]): AggregatePlan {
  let next = 0;
  return {
    aggregates: groups.flatMap((g) => g.aggregates),
    groups: groups.map((g) => ({ key: g.key, id: g.key.join('+'), aggregates: g.aggregates.map(() => next++) })),
  };
}

let seq = 0;
/** A fresh transaction id. */
export const txid = (): string => `tx-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * A payment's input: every aggregate counted unless `counted` says otherwise; `value` per aggregate defaults to
 * `amount` for sum/avg/max and `member` for distinct.
 */
export function input(
  plan: AggregatePlan,
  o: {
    at: number;
    entities: (string | undefined)[];
    tx?: string;
    amount?: number;
    member?: string;
    counted?: boolean[];
    values?: (number | string | undefined)[];
  },
): AggregateInput {
  return {
    transactionId: o.tx ?? txid(),
    at: o.at,
    entities: o.entities,
    counted: o.counted ?? plan.aggregates.map(() => true),
    values:
      o.values ??
      plan.aggregates.map((a) =>
        a.op === 'count' ? undefined : a.op === 'distinct' ? (o.member ?? 'm') : (o.amount ?? 10),
      ),
  };
}

/** A unique entity value for one test (stores may be shared by tests). */
export const entity = (name: string): string => `${name}-${Math.random().toString(36).slice(2, 10)}`;

/** The plan of the property: two keys, every op, windows whose rings turn over within a sequence. */
export const PROPERTY_PLAN = planOf(
  {
    key: ['userId'],
    aggregates: [
      agg('uc', 'count', 15 * MIN),
      agg('us', 'sum', HOUR),
      agg('ua', 'avg', 15 * MIN),
      agg('um', 'max', HOUR),
      agg('ud', 'distinct', HOUR, 3),
      agg('ud2', 'distinct', 15 * MIN, 2),
    ],
  },
  { key: ['email'], aggregates: [agg('ec', 'count', HOUR)] },
);

/** Random payments: mostly forwards, some backwards (a clock behind), some retries of an earlier one. */
export const paymentSteps = fc.array(
  fc.record({
    dt: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 1, max: 150_000 }),
      fc.integer({ min: 1, max: HOUR }),
      fc.integer({ min: -300_000, max: -1 }),
      fc.integer({ min: -2 * HOUR, max: -HOUR }),
    ),
    user: fc.constantFrom('u1', 'u2', undefined),
    email: fc.constantFrom('e1', undefined),
    amount: fc.integer({ min: 1, max: 1000 }),
    member: fc.constantFrom('a', 'b', 'c', 'd'),
    counted: fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
    retry: fc.nat(9),
  }),
  { minLength: 1, maxLength: 60 },
);

/** One random payment step. */
export type PaymentStep = typeof paymentSteps extends fc.Arbitrary<(infer S)[]> ? S : never;

/** The inputs of a sequence of steps (a retry repeats an earlier payment at a later time). */
export function inputsOf(steps: readonly PaymentStep[]): AggregateInput[] {
  const out: AggregateInput[] = [];
  let at = T0 + 12_345;
  steps.forEach((s, k) => {
    at += s.dt;
    const earlier = out[s.retry % Math.max(1, out.length)];
    if (s.retry === 0 && earlier !== undefined) {
      out.push({ ...earlier, at });
      return;
    }
    out.push(
      input(PROPERTY_PLAN, {
        at,
        tx: `p${k}`,
        entities: [s.user, s.email],
        counted: s.counted,
        amount: s.amount,
        member: s.member,
      }),
    );
  });
  return out;
}
