/**
 * The rules' view of a feature row: `features.<name>` reads `row[i]` without turning the row back into a
 * name→value map per decision. Built once per feature list; one decision binds its row for a synchronous
 * evaluation ({@link FeatureView.with}).
 *
 * Why own getters on one plain object, not a prototype with getters: CEL (`@marcbachmann/cel-js`) reads a `map`
 * variable only if its constructor is `Object` (or it is a `Map`) and the key is an own property (`Object.hasOwn`).
 */
export interface FeatureView {
  /**
   * Runs `fn` (synchronous) with `row` readable through the view's features by name (in the list's order).
   * The features object must not be kept past `fn`: outside it, reading a feature throws.
   */
  with<T>(row: ArrayLike<number>, fn: (features: Readonly<Record<string, number>>) => T): T;
}

/** Thrown when a feature is read outside {@link FeatureView.with} (a bug: the features were kept). */
export class FeaturesUnbound extends Error {
  override readonly name = 'FeaturesUnbound';
}

/** The view of rows in `names` order (compiled once: one getter per name). */
export function featureView(names: readonly string[]): FeatureView {
  let row: ArrayLike<number> | undefined;
  const features: Record<string, number> = {};
  names.forEach((name, i) =>
    Object.defineProperty(features, name, {
      enumerable: true,
      get: () => {
        if (row === undefined) throw new FeaturesUnbound(`feature ${name} read outside its decision`);
        return row[i] ?? 0;
      },
    }),
  );
  Object.freeze(features);
  return {
    with<T>(bound: ArrayLike<number>, fn: (f: Readonly<Record<string, number>>) => T): T {
      const previous = row;
      row = bound;
      try {
        return fn(features);
      } finally {
        row = previous;
      }
    },
  };
}
