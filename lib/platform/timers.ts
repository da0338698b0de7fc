/**
 * The one timer type every module takes as a dependency (tests pass a fake and drive time by hand), and its
 * two production defaults: `unrefTimers` for background work that must never keep the process alive
 * (token refresh, health probes, fleet reconcile), `refTimers` for timers a pending caller waits on
 * (a batch window, a wait for an admission slot).
 */

/** Timer functions; injected so tests drive time by hand. */
export interface Timers {
  /** Calls `fn` once after `ms` milliseconds; returns a handle for {@link Timers.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The process's timers, unref'd: they never keep the process alive. */
export const unrefTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** The process's timers as they are (ref'd): the process stays up while one is pending. */
export const refTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};
