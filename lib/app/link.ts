/** A value bound after its reader is built: a call that runs only after start, against the construction order. */
export interface Link<T> {
  /** The bound value; `undefined` before {@link bind}. */
  readonly value: T | undefined;
  /** Binds the value (once). @throws Error if already bound. */
  bind(value: T): T;
}

/** An unbound link named `name` (the name is in the error of a second binding). */
export function link<T>(name: string): Link<T> {
  let bound: { value: T } | undefined;
  return {
    get value() {
      return bound?.value;
    },
    bind(value) {
      if (bound !== undefined) throw new Error(`link "${name}" is already bound`);
      bound = { value };
      return value;
    },
  };
}
