/**
 * Remembers the results of a pure function of a string for the last `max` distinct keys (first in, first
 * out), so that a repeat costs one `Map` lookup instead of the computation (e.g. an HMAC per span).
 */
export class BoundedMemo<V> {
  private readonly entries = new Map<string, V>();

  /**
   * @param max most keys remembered (≥ 1); the oldest is forgotten first.
   * @throws TypeError naming `max` when it is not a number ≥ 1 (`NaN` would mean no bound).
   */
  constructor(
    readonly max: number,
    private readonly fn: (key: string) => V,
  ) {
    if (!(max >= 1)) throw new TypeError(`BoundedMemo: max must be a number >= 1, got ${max}`);
  }

  /** `fn(key)`, computed at most once while `key` is remembered. */
  get(key: string): V {
    const known = this.entries.get(key);
    if (known !== undefined) return known;
    const value = this.fn(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, value);
    return value;
  }

  /** Keys remembered now. */
  get size(): number {
    return this.entries.size;
  }

  /** Forgets everything (e.g. when the function's key material changes). */
  clear(): void {
    this.entries.clear();
  }
}
