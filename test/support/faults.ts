import type { ResultPublisher } from '../../lib/async/result-publisher';
import { AppError } from '../../lib/errors/errors';
import type { BackendFactory, InferenceBackend } from '../../lib/inference/backend';

/** A fault plan: asked before each call; returns an error to throw, or undefined to go on. */
export type FaultPlan = () => AppError | undefined;

/** Faults with probability `p` from a seeded generator (mulberry32), as transient `overloaded` errors. */
export function randomFaults(
  p: number,
  seed: number,
  code: 'overloaded' | 'dependency_unavailable' = 'overloaded',
): FaultPlan {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => (next() < p ? new AppError(code, 'injected transient fault', { transient: true }) : undefined);
}

/**
 * Observes and injects faults into a real backend factory's runs (warm-up runs are never faulted):
 * `stats.runs` counts inference calls, `stats.rows` the rows (scored events) they held.
 */
export function faultyFactory(
  real: BackendFactory,
  plan: { fault: FaultPlan },
  stats: { runs: number; rows?: number } = { runs: 0 },
): BackendFactory {
  return {
    load: async (model) => {
      const b = await real.load(model);
      let warmed = false;
      const wrapped: InferenceBackend = {
        info: b.info,
        run: (input, rows, o) => {
          if (warmed) {
            const f = plan.fault();
            if (f !== undefined) return Promise.reject(f);
            stats.runs++;
            stats.rows = (stats.rows ?? 0) + rows;
          }
          warmed = true;
          return b.run(input, rows, o);
        },
        infer: (r, o) => b.infer(r, o),
        dispose: () => b.dispose(),
      };
      return wrapped;
    },
  };
}

/** Injects faults into a real publisher: a fault after scoring and storing, before the result is out. */
export function faultyPublisher(real: ResultPublisher, plan: { fault: FaultPlan }): ResultPublisher {
  return {
    publish: (m) => {
      const f = plan.fault();
      return f !== undefined ? Promise.reject(f) : real.publish(m);
    },
    dispose: () => real.dispose(),
  };
}
