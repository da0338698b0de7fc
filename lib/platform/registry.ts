/**
 * Subsystems that declare what they need and what they provide (as fastify/avvio plugins): one declaration gives
 * both the construction order (a topological order of the needs) and the disposal order (its reverse). Problems
 * of the declarations (a need no subsystem provides, a cycle, a name provided twice) fail at start, naming them,
 * before anything is built. Disposal is idempotent, and every subsystem is disposed even when another one throws;
 * the failures are thrown together as one `AggregateError`.
 * @module
 */

/**
 * One subsystem: `provides` the value `M[K]` under its name, built by `create` from the values of its `needs`;
 * `dispose` releases it (called once, in reverse construction order).
 */
export interface Subsystem<M, K extends keyof M & string = keyof M & string, N extends keyof M & string = never> {
  readonly name: K;
  readonly needs: readonly N[];
  create(deps: Pick<M, N>): M[K] | Promise<M[K]>;
  dispose?(value: M[K]): unknown;
}

/** A subsystem of the map `M` whatever it provides and needs (a list of them is what {@link startSubsystems} takes). */
export interface AnySubsystem<M> {
  readonly name: keyof M & string;
  readonly needs: readonly (keyof M & string)[];
  create(deps: never): unknown;
  dispose?(value: never): unknown;
}

/**
 * The declaration helper of a map `M` of names to what they provide: `const define = subsystemsOf<Parts>()`, then
 * `define({ name: 'scorer', needs: ['sessions'], create: ({ sessions }) => … })` checks the types of `create`'s
 * dependencies and result against `M`.
 */
export function subsystemsOf<M>(): <K extends keyof M & string, N extends keyof M & string = never>(
  s: Subsystem<M, K, N>,
) => AnySubsystem<M> {
  return (s) => s as unknown as AnySubsystem<M>;
}

/** A value given from outside (settings, injected clients): a subsystem with no needs and nothing to dispose. */
export function given<M, K extends keyof M & string>(name: K, value: M[K]): AnySubsystem<M> {
  return { name, needs: [], create: () => value };
}

/** The subsystems started: what each provides, and their disposal. */
export interface Started<M> {
  /** The names in construction order. */
  readonly order: readonly (keyof M & string)[];
  /** What the subsystem `name` provides. */
  get<K extends keyof M & string>(name: K): M[K];
  /**
   * Disposes every subsystem once, in reverse construction order, each even if another throws; a second call
   * returns the first's promise.
   * @throws AggregateError of every subsystem's failure (each a `SubsystemError` naming it).
   */
  dispose(): Promise<void>;
}

/** A subsystem's failure to start or to dispose, naming it (`cause`: what it threw). */
export class SubsystemError extends Error {
  constructor(
    readonly subsystem: string,
    readonly phase: 'create' | 'dispose',
    cause: unknown,
  ) {
    super(`subsystem "${subsystem}" failed to ${phase}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'SubsystemError';
  }
}

/**
 * The construction order of `list`: each subsystem after everything it needs; among the ready ones, the list's
 * order. Builds nothing.
 * @throws Error naming a name provided twice, a need no subsystem provides (and who needs it), or a cycle.
 */
export function subsystemOrder<M>(list: readonly AnySubsystem<M>[]): (keyof M & string)[] {
  const byName = new Map<string, AnySubsystem<M>>();
  for (const s of list) {
    if (byName.has(s.name)) throw new Error(`subsystem "${s.name}" is declared twice`);
    byName.set(s.name, s);
  }
  for (const s of list)
    for (const n of s.needs)
      if (!byName.has(n)) throw new Error(`subsystem "${s.name}" needs "${n}", which no subsystem provides`);
  const order: (keyof M & string)[] = [];
  const placed = new Set<string>();
  let left = [...list];
  while (left.length > 0) {
    const ready = left.filter((s) => s.needs.every((n) => placed.has(n)));
    if (ready.length === 0) throw new Error(`subsystems form a cycle: ${findCycle(left).join(' → ')}`);
    for (const s of ready) {
      order.push(s.name);
      placed.add(s.name);
    }
    left = left.filter((s) => !placed.has(s.name));
  }
  return order;
}

/** One cycle among `left` (every one of which needs another of them), as names, the first repeated at the end. */
function findCycle<M>(left: readonly AnySubsystem<M>[]): string[] {
  const byName = new Map(left.map((s) => [s.name as string, s]));
  const path: string[] = [];
  let at = left[0] as AnySubsystem<M>;
  while (!path.includes(at.name)) {
    path.push(at.name);
    const next = at.needs.find((n) => byName.has(n));
    at = byName.get(next as string) as AnySubsystem<M>;
  }
  return [...path.slice(path.indexOf(at.name)), at.name];
}

/**
 * Creates every subsystem of `list` in {@link subsystemOrder}, each from what its needs provided. When one fails
 * to create, the ones already created are disposed (reverse order) and its {@link SubsystemError} is thrown (with
 * the disposal failures, as an `AggregateError`, if any).
 * @throws Error of {@link subsystemOrder} before anything is created.
 */
export async function startSubsystems<M>(list: readonly AnySubsystem<M>[]): Promise<Started<M>> {
  const order = subsystemOrder(list);
  const byName = new Map(list.map((s) => [s.name as string, s]));
  const values = new Map<string, unknown>();
  const created: AnySubsystem<M>[] = [];
  const started: Started<M> = {
    order,
    get: (name) => {
      if (!values.has(name)) throw new Error(`subsystem "${name}" is not started`);
      return values.get(name) as M[typeof name];
    },
    dispose: once(() => disposeAll(created, values)),
  };
  for (const name of order) {
    const s = byName.get(name) as AnySubsystem<M>;
    const deps = Object.fromEntries(s.needs.map((n) => [n, values.get(n)]));
    try {
      values.set(name, await (s.create as (d: unknown) => unknown)(deps));
    } catch (err) {
      const failure = new SubsystemError(name, 'create', err);
      try {
        await started.dispose();
      } catch (e) {
        throw new AggregateError([failure, ...(e as AggregateError).errors], failure.message);
      }
      throw failure;
    }
    created.push(s);
  }
  return started;
}

/** Disposes `created` in reverse, each even if another throws. @throws AggregateError of the failures. */
async function disposeAll<M>(created: readonly AnySubsystem<M>[], values: ReadonlyMap<string, unknown>): Promise<void> {
  const errors: SubsystemError[] = [];
  for (const s of [...created].reverse()) {
    if (s.dispose === undefined) continue;
    try {
      await (s.dispose as (v: unknown) => unknown)(values.get(s.name));
    } catch (err) {
      errors.push(new SubsystemError(s.name, 'dispose', err));
    }
  }
  if (errors.length > 0)
    throw new AggregateError(
      errors,
      `${errors.length} subsystem(s) failed to dispose: ${errors.map((e) => e.subsystem).join(', ')}`,
    );
}

/** `fn` run on the first call only; later calls return the first call's promise. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= fn());
}
