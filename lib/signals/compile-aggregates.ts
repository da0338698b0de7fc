/**
 * The aggregates of a signals document, compiled once per version: the {@link AggregatePlan} the stores use
 * (groups by key, stable spec ids), the `where` filters (CEL, checked once), the accessors of every key and
 * `of` field, and each aggregate's definition in plain words.
 * @module
 */
import { createHash } from 'node:crypto';
import type { PaymentEvent } from '../domain/payment-event';
import type { FieldError } from '../errors/errors';
import { BUCKETS, type AggregateInput, type AggregatePlan, type AggregateSpec, type KeyGroup } from './aggregate-store';
import { fieldReader, keyReader, type FieldReader } from './event-fields';
import { compileCel, whereEnvironment } from './signals-cel';
import { DEFAULT_DISTINCT_CAP, windowMs, type AggregateDocument, type KeyField } from './signals-document';

/** The aggregates of one version, compiled. */
export interface CompiledAggregates {
  readonly plan: AggregatePlan;
  /** Definitions in plain words, in plan order. */
  readonly definitions: readonly string[];
  /** What one payment brings to the plan (see {@link AggregateInput}). */
  input(event: PaymentEvent, transactionId: string, at: number): AggregateInput;
}

/** The key fields of an aggregate, as a list. */
export const keyFields = (a: AggregateDocument): readonly KeyField[] => (typeof a.key === 'string' ? [a.key] : a.key);

/**
 * The stable id of an aggregate's definition: a hash of key, op, of, window (as ms), where and cap (the
 * effective one), so a renamed aggregate, or a window written `60m` instead of `1h`, keeps its counts.
 */
export function aggregateId(a: AggregateDocument): string {
  const canonical = JSON.stringify([
    keyFields(a),
    a.op,
    a.of ?? null,
    windowMs(a.window) ?? a.window,
    a.where ?? null,
    a.op === 'distinct' ? (a.cap ?? DEFAULT_DISTINCT_CAP) : 0,
  ]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 12);
}

/** An aggregate in plain words, e.g. "distinct userId per cardFingerprint over 1h (at most 25)". */
export function describeAggregate(a: AggregateDocument): string {
  const per = `per ${keyFields(a).join(' and ')} over ${a.window}`;
  const what =
    a.op === 'count'
      ? `payments ${per}`
      : a.op === 'sum'
        ? `sum of ${a.of ?? 'amount'} ${per}`
        : a.op === 'avg'
          ? `average ${a.of ?? 'amount'} ${per}`
          : a.op === 'max'
            ? `largest ${a.of ?? 'amount'} ${per}`
            : `distinct ${a.of ?? '?'} ${per} (at most ${a.cap ?? DEFAULT_DISTINCT_CAP})`;
  const where = a.where === undefined ? '' : `, counting only payments where ${a.where}`;
  return `${what}${where}${a.description === undefined ? '' : ` — ${a.description}`}`;
}

/** Per aggregate: whether a payment is counted and what it adds. */
interface Counter {
  readonly where: ((event: PaymentEvent) => boolean) | undefined;
  /** `distinct`: the field counted; sum/avg/max: the amount; count: nothing. */
  readonly value: ((event: PaymentEvent) => number | string | undefined) | undefined;
}

function whereFilter(
  source: string,
  path: string,
  errors: FieldError[],
): ((event: PaymentEvent) => boolean) | undefined {
  const compiled = compileCel(whereEnvironment(), source, ['bool']);
  if (!compiled.ok) {
    errors.push({ path, message: `column ${compiled.column}: ${compiled.message}`, column: compiled.column });
    return () => false;
  }
  const vars: { event: unknown } = { event: undefined };
  const run = compiled.run;
  return (event) => {
    vars.event = event;
    try {
      return run(vars) === true;
    } catch {
      return false; // a runtime error (e.g. an absent field without has()) counts nothing
    } finally {
      vars.event = undefined;
    }
  };
}

/**
 * Compiles a document's aggregates, pushing one error per `where` that does not compile
 * (`aggregates.<i>.where`, with its column).
 */
export function compileAggregates(docs: readonly AggregateDocument[], errors: FieldError[]): CompiledAggregates {
  const aggregates: AggregateSpec[] = [];
  const groups: { key: readonly KeyField[]; id: string; aggregates: number[] }[] = [];
  const counters: Counter[] = [];
  docs.forEach((a, i) => {
    const ms = windowMs(a.window) ?? 0;
    aggregates.push(
      Object.freeze({
        name: a.name,
        id: aggregateId(a),
        op: a.op,
        windowMs: ms,
        bucketMs: ms / BUCKETS,
        cap: a.op === 'distinct' ? (a.cap ?? DEFAULT_DISTINCT_CAP) : 0,
      }),
    );
    const key = keyFields(a);
    const id = key.join('+');
    let group = groups.find((g) => g.id === id);
    if (group === undefined) groups.push((group = { key, id, aggregates: [] }));
    group.aggregates.push(i);
    const of: FieldReader | undefined = a.op === 'distinct' ? fieldReader(a.of as KeyField) : undefined;
    counters.push({
      where: a.where === undefined ? undefined : whereFilter(a.where, `aggregates.${i}.where`, errors),
      value: a.op === 'count' ? undefined : (of ?? ((e: PaymentEvent) => e.amount)),
    });
  });
  const plan: AggregatePlan = Object.freeze({
    aggregates: Object.freeze(aggregates),
    groups: Object.freeze(
      groups.map((g): KeyGroup => Object.freeze({ ...g, aggregates: Object.freeze(g.aggregates) })),
    ),
  });
  const entityOf = groups.map((g) => keyReader(g.key));
  const groupOf: number[] = new Array<number>(docs.length).fill(0);
  groups.forEach((g, gi) => g.aggregates.forEach((ai) => (groupOf[ai] = gi)));
  return {
    plan,
    definitions: Object.freeze(docs.map(describeAggregate)),
    input(event, transactionId, at) {
      const entities = entityOf.map((read) => read(event));
      const counted = new Array<boolean>(counters.length);
      const values = new Array<number | string | undefined>(counters.length);
      for (let i = 0; i < counters.length; i++) {
        const c = counters[i] as Counter;
        const value = c.value?.(event);
        counted[i] =
          entities[groupOf[i] as number] !== undefined &&
          (c.value === undefined || value !== undefined) &&
          (c.where === undefined || c.where(event));
        values[i] = counted[i] ? value : undefined;
      }
      return { transactionId, at, entities, counted, values };
    },
  };
}
