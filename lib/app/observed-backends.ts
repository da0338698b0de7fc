/**
 * The loaded backends' lifecycle as typed events: a backend factory whose backends announce their loading and
 * their disposal (telemetry's queue-depth gauge subscribes), by delegation; the backends themselves are not changed.
 * @module
 */
import type { BackendFactory, InferenceBackend } from '../inference/backend';
import type { BatcherStats } from '../inference/batcher-types';

/** A loaded backend that counts its queue (a micro-batcher). */
export interface CountedBackend {
  readonly stats: BatcherStats;
}

/** Events of the backends a factory loads (only those that count their queue). */
export interface BackendEvents {
  /** A backend was loaded; its `stats` are live. */
  opened(backend: CountedBackend): void;
  /** The same backend was disposed. */
  closed(backend: CountedBackend): void;
}

/** `factory`, its backends that count their queue announced to `on` when loaded and when disposed. */
export function observedBackends(factory: BackendFactory, on: Partial<BackendEvents>): BackendFactory {
  return {
    load: async (model) => {
      const backend = await factory.load(model);
      if ((backend as Partial<CountedBackend>).stats === undefined) return backend;
      const counted = backend as InferenceBackend & CountedBackend;
      on.opened?.(counted);
      let closed = false;
      return {
        get info() {
          return counted.info;
        },
        get stats() {
          return counted.stats;
        },
        infer: (request, options) => counted.infer(request, options),
        run: (input, rows, options) => counted.run(input, rows, options),
        dispose: () => {
          if (!closed) on.closed?.(counted);
          closed = true;
          return counted.dispose();
        },
      } satisfies InferenceBackend & CountedBackend;
    },
  };
}
