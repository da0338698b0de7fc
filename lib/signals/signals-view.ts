/**
 * A view of a signals row by name: `signals.<name>` reads `row[i]` without turning the row into a name→value
 * map per payment (as lib/features/feature-view.ts for features). Built once per signals version; one payment
 * binds its row for a synchronous evaluation ({@link SignalsView.with}).
 *
 * Own getters on one plain object: CEL (`@marcbachmann/cel-js`) reads a `map` variable only if its constructor
 * is `Object` (or it is a `Map`) and the key is an own property.
 * @module
 */

/** Thrown when a signal is read outside {@link SignalsView.with}, or before it is computed. */
export class SignalUnavailable extends Error {
  override readonly name = 'SignalUnavailable';
}

export interface SignalsView {
  /**
   * Runs `fn` (synchronous) with `row` readable by name; only the first `readable` signals of the row (default
   * all) may be read, a later one throws (a feature's expression never reads what is computed after it).
   */
  with<T>(row: Float64Array, fn: (signals: Readonly<Record<string, number>>) => T, readable?: number): T;
}

/** The view of rows in `names` order (one getter per name, defined once). */
export function signalsView(names: readonly string[]): SignalsView {
  let row: Float64Array | undefined;
  let limit = 0;
  const signals: Record<string, number> = {};
  names.forEach((name, i) =>
    Object.defineProperty(signals, name, {
      enumerable: true,
      get: () => {
        if (row === undefined || i >= limit) throw new SignalUnavailable(`signal ${name} is not available here`);
        return row[i] ?? 0;
      },
    }),
  );
  Object.freeze(signals);
  return {
    with<T>(bound: Float64Array, fn: (s: Readonly<Record<string, number>>) => T, readable = names.length): T {
      const previous = row;
      const previousLimit = limit;
      row = bound;
      limit = readable;
      try {
        return fn(signals);
      } finally {
        row = previous;
        limit = previousLimit;
      }
    },
  };
}

/** The signals of a payment scored without a signals version: none (rules reading one fail closed). */
export const NO_SIGNALS: Readonly<Record<string, number>> = Object.freeze({});
