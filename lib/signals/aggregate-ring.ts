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
import { hash as digest } from 'node:crypto';
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
  return digest('sha256', value, 'base64url').slice(0, 11);
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
  /** Their ids, in group order. */
  readonly ids: readonly string[];
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
    return { group, specs, indexes: group.aggregates, ids: specs.map((x) => x.id), ttlMs };
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

/**
 * The ring of one aggregate in process memory, laid out as the Redis script's: its non-empty slots as entries in
 * the order they were first used (a read adds them in that order, so both stores give the same sums), each entry
 * `[bucket, a, b]` in {@link Ring.d}: a = count, sum or max (avg: the count), b = the avg's sum.
 */
export interface Ring {
  /** Entries, 3 numbers each (at most SLOTS). */
  readonly d: Float64Array;
  /** Entries in use. */
  n: number;
  /** distinct: the members of each entry. */
  readonly sets: Set<string>[] | undefined;
}

export function newRing(op: AggregateOp): Ring {
  return { d: new Float64Array(3 * SLOTS), n: 0, sets: op === 'distinct' ? [] : undefined };
}

/**
 * Adds a payment at bucket `cur` to a ring (see the module doc: reset an older slot, drop a write older than the
 * slot). @returns the change in members held (distinct: +1 for a member added, minus the members of a slot reset;
 * others: 0), for the memory store's size estimate.
 */
export function ringAdd(ring: Ring, spec: AggregateSpec, cur: number, addend: number | string): number {
  const d = ring.d;
  const slot = cur % SLOTS;
  let e = 0;
  while (e < ring.n && (d[3 * e] as number) % SLOTS !== slot) e++;
  const i = 3 * e;
  const held = e < ring.n ? (d[i] as number) : -Infinity;
  if (held > cur) return 0;
  if (e === ring.n) ring.n++;
  const fresh = held < cur;
  d[i] = cur;
  const x = typeof addend === 'number' ? addend : 0;
  const a = d[i + 1] as number;
  switch (spec.op) {
    case 'count':
      d[i + 1] = fresh ? 1 : a + 1;
      return 0;
    case 'sum':
      d[i + 1] = fresh ? x : a + x;
      return 0;
    case 'max':
      d[i + 1] = fresh ? x : Math.max(a, x);
      return 0;
    case 'avg':
      d[i + 1] = fresh ? 1 : a + 1;
      d[i + 2] = fresh ? x : (d[i + 2] as number) + x;
      return 0;
    case 'distinct': {
      const sets = ring.sets as Set<string>[];
      let set = sets[e];
      let dropped = 0;
      if (fresh || set === undefined) {
        dropped = set?.size ?? 0;
        sets[e] = set = new Set();
      }
      const m = addend as string;
      if (set.size >= spec.cap || set.has(m)) return -dropped;
      set.add(m);
      return 1 - dropped;
    }
  }
}

/** The value of a ring read at bucket `cur`: its entries whose bucket is in [cur − BUCKETS, cur], in order. */
export function ringRead(ring: Ring, spec: AggregateSpec, cur: number): number {
  const d = ring.d;
  const lo = cur - BUCKETS;
  let a = 0;
  let b = 0;
  let max: number | undefined;
  let union: Set<string> | undefined;
  let only: Set<string> | undefined;
  for (let e = 0; e < ring.n; e++) {
    const id = d[3 * e] as number;
    if (id < lo || id > cur) continue;
    const p = d[3 * e + 1] as number;
    if (spec.op === 'distinct') {
      const set = (ring.sets as Set<string>[])[e];
      if (set === undefined || set.size === 0) continue;
      if (set.size >= spec.cap) return spec.cap;
      if (only === undefined) only = set;
      else {
        union ??= new Set(only);
        for (const m of set) union.add(m);
      }
    } else if (spec.op === 'max') max = max === undefined || p > max ? p : max;
    else {
      a += p;
      b += d[3 * e + 2] as number;
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
