/**
 * What both aggregate stores share (docs/signals.md "Windows", "Memory bounds"): the bucket ring of one aggregate,
 * the hash of raw values, and a plan prepared once for the stores (op codes, bucket lengths, key TTLs).
 *
 * The ring of an aggregate has {@link SLOTS} = BUCKETS + 1 slots. A payment at `at` falls in bucket
 * `floor(at / bucketMs)`, kept in slot `bucket mod SLOTS`; a slot holds its bucket id and its value. A read at
 * bucket `cur` takes the slots whose bucket is in [cur − BUCKETS, cur]: the current bucket plus the BUCKETS before
 * it, so a window of length W covers between W and W + W / BUCKETS of time ("sawtooth"). A write to a slot that
 * holds an older bucket resets it first; a write whose bucket is older than the slot's (a clock behind another
 * instance's by more than the window) is dropped, since that bucket has left the ring. Memory per aggregate is
 * fixed: SLOTS numbers, or SLOTS member sets of at most `cap` members each for `distinct`.
 *
 * Distinct counts are capped exact sets, not HyperLogLog: a slot stops adding members once it holds `cap`, and a
 * read answers `cap` when a slot of its window is full (the true count is then at least `cap`), else the size of
 * the union of its slots. So the answer is exactly min(distinct values, cap). At the caps fraud rules use (Stripe
 * Radar's 25, at most 1000 here) such sets are exact and small (25 hashed members of 11 bytes per slot), where a
 * HyperLogLog is approximate (about 0.8 % standard error) and takes 12 KB per key once dense.
 * @module
 */
import { createHash } from 'node:crypto';
import type { AggregateOp } from './signals-document';
import { BUCKETS, type AggregatePlan, type AggregateSpec, type KeyGroup } from './aggregate-store';

/** Slots of a ring: the current bucket plus the {@link BUCKETS} before it. */
export const SLOTS = BUCKETS + 1;

/** Default of the idempotency records kept per entity (the oldest beyond are forgotten). */
export const DEFAULT_MAX_RECORDS_PER_ENTITY = 1000;

/** What a key outlives its group's longest window and bucket by, ms. */
export const TTL_MARGIN_MS = 60_000;

/**
 * The default hash of raw values (entities, distinct members): SHA-256, its first 66 bits as 11 base64url
 * characters. Fixed width, no `{`, `}` or `|`.
 */
export function defaultAggregateHash(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url').slice(0, 11);
}

/**
 * The width of a hash's output, checked on two samples.
 * @throws TypeError when the hash does not return one fixed, non-empty width (the distinct encoding needs it).
 */
export function hashWidth(hash: (value: string) => string): number {
  const w = hash('').length;
  if (w === 0 || hash('a@example.com\u00000').length !== w)
    throw new TypeError('the aggregate hash must return strings of one fixed, non-zero length');
  return w;
}

/** Op codes of the Redis script and the memory ring. */
export const OP_CODE: Readonly<Record<AggregateOp, string>> = {
  count: 'c',
  sum: 's',
  avg: 'a',
  max: 'm',
  distinct: 'd',
};

/** One group of a plan, prepared once for the stores. */
export interface PreparedGroup {
  readonly group: KeyGroup;
  /** The group's aggregates, in group order. */
  readonly specs: readonly AggregateSpec[];
  /** Their indexes in the plan (as `group.aggregates`). */
  readonly indexes: readonly number[];
  /** Key TTL: the group's longest window + its bucket + {@link TTL_MARGIN_MS}. */
  readonly ttlMs: number;
}

const prepared = new WeakMap<AggregatePlan, readonly PreparedGroup[]>();

/**
 * A plan prepared for the stores (once per plan object).
 * @throws Error for a plan no compiler builds (an aggregate id with a line break, an index out of range).
 */
export function preparePlan(plan: AggregatePlan): readonly PreparedGroup[] {
  const known = prepared.get(plan);
  if (known !== undefined) return known;
  const groups = plan.groups.map((group): PreparedGroup => {
    const specs = group.aggregates.map((i) => {
      const spec = plan.aggregates[i];
      if (spec === undefined)
        throw new Error(`aggregate plan: group ${group.id} names aggregate ${i}, not in the plan`);
      if (spec.id === '' || /[\n=]/.test(spec.id))
        throw new Error(
          `aggregate plan: aggregate id ${JSON.stringify(spec.id)} is empty or holds "=" or a line break`,
        );
      return spec;
    });
    const ttlMs = specs.reduce((m, s) => Math.max(m, s.windowMs + s.bucketMs), 0) + TTL_MARGIN_MS;
    return { group, specs, indexes: group.aggregates, ttlMs };
  });
  prepared.set(plan, groups);
  return groups;
}

/**
 * What a payment adds to one aggregate, or `undefined` when it is not counted: 1 for count, the amount for
 * sum/avg/max (a non-finite one is not counted), the hashed member for distinct.
 */
export function addendOf(
  spec: AggregateSpec,
  counted: boolean | undefined,
  value: number | string | undefined,
  hash: (value: string) => string,
): number | string | undefined {
  if (counted !== true) return undefined;
  switch (spec.op) {
    case 'count':
      return 1;
    case 'distinct':
      return value === undefined ? undefined : hash(String(value));
    default:
      return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  }
}

/** The bucket of a time for an aggregate. */
export const bucketOf = (at: number, spec: AggregateSpec): number => Math.floor(at / spec.bucketMs);

/** The ring of one aggregate in process memory (the Redis script keeps the same, as hash fields). */
export interface Ring {
  /** Bucket id per slot, -Infinity when never written. */
  readonly ids: Float64Array;
  /** count, sum or max per slot; for avg, the count. */
  readonly a: Float64Array;
  /** avg: the sum per slot. */
  readonly b: Float64Array | undefined;
  /** distinct: the members per slot. */
  readonly sets: (Set<string> | undefined)[] | undefined;
  /** The slots in the order they were first written (the order a read adds them in, as the Redis script's). */
  readonly order: number[];
}

export function newRing(op: AggregateOp): Ring {
  return {
    ids: new Float64Array(SLOTS).fill(-Infinity),
    a: new Float64Array(SLOTS),
    b: op === 'avg' ? new Float64Array(SLOTS) : undefined,
    sets: op === 'distinct' ? new Array<Set<string> | undefined>(SLOTS).fill(undefined) : undefined,
    order: [],
  };
}

/**
 * Adds a payment at bucket `cur` to a ring (see the module doc: reset an older slot, drop a write older than the
 * slot). @returns the change in members held (distinct: +1 for a member added, minus the members of a slot reset;
 * others: 0), for the memory store's size estimate.
 */
export function ringAdd(ring: Ring, spec: AggregateSpec, cur: number, addend: number | string): number {
  const s = cur % SLOTS;
  const held = ring.ids[s] as number;
  if (held > cur) return 0;
  if (held === -Infinity) ring.order.push(s);
  const fresh = held < cur;
  ring.ids[s] = cur;
  const n = typeof addend === 'number' ? addend : 0;
  switch (spec.op) {
    case 'count':
      ring.a[s] = fresh ? 1 : (ring.a[s] as number) + 1;
      return 0;
    case 'sum':
      ring.a[s] = fresh ? n : (ring.a[s] as number) + n;
      return 0;
    case 'max':
      ring.a[s] = fresh ? n : Math.max(ring.a[s] as number, n);
      return 0;
    case 'avg':
      ring.a[s] = fresh ? 1 : (ring.a[s] as number) + 1;
      (ring.b as Float64Array)[s] = fresh ? n : ((ring.b as Float64Array)[s] as number) + n;
      return 0;
    case 'distinct': {
      const sets = ring.sets as (Set<string> | undefined)[];
      let set = sets[s];
      let dropped = 0;
      if (fresh || set === undefined) {
        dropped = set?.size ?? 0;
        sets[s] = set = new Set();
      }
      if (set.size >= spec.cap || set.has(String(addend))) return -dropped;
      set.add(String(addend));
      return 1 - dropped;
    }
  }
}

/** The value of a ring read at bucket `cur`: its slots in [cur − BUCKETS, cur], added in {@link Ring.order}. */
export function ringRead(ring: Ring, spec: AggregateSpec, cur: number): number {
  const lo = cur - BUCKETS;
  let a = 0;
  let b = 0;
  let max: number | undefined;
  let union: Set<string> | undefined;
  let only: Set<string> | undefined;
  for (const s of ring.order) {
    const id = ring.ids[s] as number;
    if (id < lo || id > cur) continue;
    if (spec.op === 'distinct') {
      const set = (ring.sets as (Set<string> | undefined)[])[s];
      if (set === undefined) continue;
      if (set.size >= spec.cap) return spec.cap;
      if (only === undefined) only = set;
      else {
        union ??= new Set(only);
        for (const m of set) union.add(m);
      }
    } else if (spec.op === 'max') max = max === undefined ? (ring.a[s] as number) : Math.max(max, ring.a[s] as number);
    else {
      a += ring.a[s] as number;
      if (ring.b !== undefined) b += ring.b[s] as number;
    }
  }
  switch (spec.op) {
    case 'distinct':
      return Math.min((union ?? only)?.size ?? 0, spec.cap);
    case 'max':
      return max ?? 0;
    case 'avg':
      return a === 0 ? 0 : b / a;
    default:
      return a;
  }
}
