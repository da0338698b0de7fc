import type { Attributes, Meter, MetricOptions } from '@opentelemetry/api';

/**
 * A monotonic counter summed in process and reported through an observable counter at each collection.
 * A synchronous counter hashes its attributes on every `add` (the SDK sorts the keys and JSON-encodes them:
 * about 1–5 µs here); this one costs one `Map` lookup on a key the caller renders cheaply, for counters
 * recorded on every request. Exported as the same kind of metric (a monotonic sum).
 */
export class SummedCounter {
  private readonly series = new Map<string, { readonly attributes: Attributes; value: number }>();

  constructor(meter: Meter, name: string, options: MetricOptions) {
    meter.createObservableCounter(name, options).addCallback((r) => {
      for (const s of this.series.values()) r.observe(s.value, s.attributes);
    });
  }

  /**
   * Adds `n` to the series `key`, which must name `attributes` one to one (e.g. their values joined).
   * @param attributes built only the first time `key` is seen.
   */
  add(key: string, n: number, attributes: () => Attributes): void {
    const s = this.series.get(key);
    if (s !== undefined) s.value += n;
    else this.series.set(key, { attributes: attributes(), value: n });
  }
}
