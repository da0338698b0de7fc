/**
 * Collapses concurrent calls for one key into one: while a call for `key` is in flight, later callers get
 * the same promise. N concurrent misses for one key therefore make exactly one origin call. Bounded by
 * the number of keys in flight (≤ concurrent requests).
 */
export class SingleFlight<V> {
  private readonly inflight = new Map<string, Promise<V>>();

  /** Runs `fn` for `key` unless a call for it is already in flight, in which case joins that call. */
  run(key: string, fn: () => Promise<V>): Promise<V> {
    const existing = this.inflight.get(key);
    if (existing !== undefined) return existing;
    const p = (async () => {
      try {
        return await fn();
      } finally {
        this.inflight.delete(key);
      }
    })();
    this.inflight.set(key, p);
    return p;
  }

  /** Keys in flight. */
  get size(): number {
    return this.inflight.size;
  }
}
