/**
 * The CEL environment rules are compiled in (`@marcbachmann/cel-js`: a tree-walking interpreter, no `eval` or
 * `new Function`). Variables: `event`, `features`, `velocity` (maps), `score` (double; NaN without a valid
 * score), `has_score` (bool), `profile` (map: id, review, decline, offset), `signals` (map: the payment's signals
 * row by name, `signals.<name>`; lib/signals). Function:
 * `in_list(name, event.<key>)` — whether the event's key field is on the declared list. Memberships are
 * resolved before evaluation (no I/O inside CEL): {@link withMemberships} makes them visible to `in_list`
 * for one synchronous evaluation.
 *
 * `event` is the validated payment event as a map of its fields (lib/domain/payment-event.ts), optional fields
 * present only when sent: `event.email`, `event.ipAddress`, `event.userAgent`, the nested maps `event.card`
 * (`bin`, `last4`, `fingerprint`), `event.billingAddress` / `event.shippingAddress` (`country`, `postalCode`)
 * and `event.metadata` (string, double or bool values). Guard an optional field with `has()`:
 * `has(event.card) && has(event.card.bin) && event.card.bin.startsWith("4")`.
 */
import { Environment } from '@marcbachmann/cel-js';

/** Whether the event's key field is on each list, by list name (prefetched for one evaluation). */
export type ListMemberships = ReadonlyMap<string, boolean>;

/** The variables one evaluation binds. */
export interface CelVariables {
  readonly event: Readonly<Record<string, unknown>>;
  readonly features: Readonly<Record<string, number>>;
  readonly velocity: Readonly<Record<string, number>>;
  /** The payment's signals by name (a view over its signals row); empty without a signals version. */
  readonly signals: Readonly<Record<string, number>>;
  readonly score: number;
  readonly has_score: boolean;
  readonly profile: { readonly id: string; readonly review: number; readonly decline: number; readonly offset: number };
}

/** A compiled expression: evaluates against bound variables; throws on a runtime error. */
export type CompiledExpression = (vars: CelVariables) => unknown;

let active: ListMemberships | undefined;

/** Thrown by `in_list` for a list whose membership was not prefetched (a bug, or a list the ruleset does not use). */
export class ListNotPrefetched extends Error {
  override readonly name = 'ListNotPrefetched';
}

function inList(name: string): boolean {
  const member = active?.get(name);
  if (member === undefined) throw new ListNotPrefetched(`list ${name} was not prefetched`);
  return member;
}

/** Runs `fn` (synchronous) with `memberships` visible to `in_list`. */
export function withMemberships<T>(memberships: ListMemberships, fn: () => T): T {
  const previous = active;
  active = memberships;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

let env: Environment | undefined;

/** The shared environment (built once; immutable after registration). */
export function celEnvironment(): Environment {
  env ??= new Environment({ limits: { maxAstNodes: 2000, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000 } })
    .registerVariable('event', 'map')
    .registerVariable('features', 'map')
    .registerVariable('velocity', 'map')
    .registerVariable('signals', 'map')
    .registerVariable('score', 'double')
    .registerVariable('has_score', 'bool')
    .registerVariable('profile', 'map')
    .registerFunction('in_list(string, dyn): bool', (name: string) => inList(name));
  return env;
}
