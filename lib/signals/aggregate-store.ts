/**
 * What the aggregate stores share (docs/signals.md "Windows", "Memory", "Cluster layout"). A compiled signals
 * version hands a store its {@link AggregatePlan} (built once per version) and, per payment, an
 * {@link AggregateInput}; the store reads and records the payment's aggregates atomically per entity and answers
 * their values. Implementations (Redis, in-process) share one contract suite.
 * @module
 */
import type { AggregateOp, KeyField } from './signals-document';

/**
 * Buckets of one window: a window of length W is read as the current bucket plus the {@link BUCKETS} before it,
 * each of W / BUCKETS ("sawtooth": it covers between W and W + W / BUCKETS of time, as Chronon's tiles).
 */
export const BUCKETS = 12;

/** One aggregate, as a store computes it. */
export interface AggregateSpec {
  /** The signal name (`signals.<name>`). */
  readonly name: string;
  /**
   * Stable id of the definition (key, op, of, window, where, cap): two signals versions that keep an aggregate
   * unchanged share its counts; a changed definition starts from zero.
   */
  readonly id: string;
  readonly op: AggregateOp;
  readonly windowMs: number;
  /** `windowMs / BUCKETS`. */
  readonly bucketMs: number;
  /** `distinct`: the most distinct values counted (the value stops there); 0 for the other ops. */
  readonly cap: number;
}

/** The aggregates that share one key: one entity per payment, one atomic call, one shard. */
export interface KeyGroup {
  /** The key fields (one, or a composite). */
  readonly key: readonly KeyField[];
  /** Stable name of the key in store key names, e.g. `cardFingerprint` or `cardFingerprint+merchantId`. */
  readonly id: string;
  /** Indexes into {@link AggregatePlan.aggregates}. */
  readonly aggregates: readonly number[];
}

/** The aggregates of one signals version, grouped by key (built once per version). */
export interface AggregatePlan {
  readonly aggregates: readonly AggregateSpec[];
  readonly groups: readonly KeyGroup[];
}

/** What one payment brings to the plan's aggregates (computed by the compiled signals, once per payment). */
export interface AggregateInput {
  /** Idempotency: a transaction recorded again changes nothing and reads what its first record read. */
  readonly transactionId: string;
  /** When the payment was seen, epoch ms, on the instance's clock (never the client's timestamp). */
  readonly at: number;
  /**
   * Per group (in plan order): the entity, i.e. the key's value (a composite's values joined by U+0000), or
   * `undefined` when the payment lacks a key field: that group's aggregates then read 0 and record nothing.
   * Raw values: the store hashes them before they become key names.
   */
  readonly entities: readonly (string | undefined)[];
  /**
   * Per aggregate: whether this payment is counted (its `where` holds and its `of` field is present), and what it
   * adds: the amount for sum/avg/max, the distinct value (raw) for distinct, `undefined` for count.
   */
  readonly counted: readonly boolean[];
  readonly values: readonly (number | string | undefined)[];
}

/**
 * Reads and records aggregates. `record` answers, per aggregate in plan order, its value over its window
 * including this payment (when counted), never a payment recorded after it: count, sum, avg (sum / count, 0
 * without payments), max (0 without payments), distinct (min(distinct values, cap)). A retried transaction id is
 * never counted twice. Never throws for data; rejects when the store cannot be reached (the caller degrades).
 */
export interface AggregateStore {
  record(plan: AggregatePlan, input: AggregateInput): Promise<Float64Array>;
  dispose?(): Promise<void>;
}
