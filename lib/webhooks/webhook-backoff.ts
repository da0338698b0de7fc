/**
 * When a failed webhook delivery is tried again, and when it is given up (dead-lettered). Pure.
 *
 * The n-th failed attempt is retried after `firstMs · 2^(n−1)`, at most `maxMs` (defaults: 10 s doubling to 1 h). A
 * delivery keeps being retried while its window lasts (`windowMs`, default and at least 24 h, counted from the event,
 * or from a manual redelivery): the attempt that fails once the window has passed is its last, and the delivery is
 * dead-lettered. So every delivery is tried for at least the window.
 * @module
 */

/** The backoff settings. */
export interface Backoff {
  readonly firstMs: number;
  readonly maxMs: number;
  readonly windowMs: number;
}

/** The defaults: 10 s doubling to 1 h, for 24 h. */
export const DEFAULT_BACKOFF: Backoff = { firstMs: 10_000, maxMs: 3_600_000, windowMs: 24 * 3_600_000 };

/** The wait after the `attempts`-th failed attempt (1 for the first), ms. */
export function retryDelay(attempts: number, b: Backoff = DEFAULT_BACKOFF): number {
  const exp = Math.max(0, Math.min(attempts - 1, 40));
  return Math.min(b.firstMs * 2 ** exp, b.maxMs);
}

/** What follows a failed attempt at `failedAt` of a delivery whose window started at `windowStart`. */
export type AfterFailure = { readonly dead: false; readonly retryAt: number } | { readonly dead: true };

/** Whether to retry (and when) or dead-letter a delivery after its `attempts`-th attempt failed at `failedAt`. */
export function afterFailure(
  attempts: number,
  failedAt: number,
  windowStart: number,
  b: Backoff = DEFAULT_BACKOFF,
): AfterFailure {
  if (failedAt - windowStart >= b.windowMs) return { dead: true };
  return { dead: false, retryAt: failedAt + retryDelay(attempts, b) };
}

/** The times of every attempt of a delivery that always fails, the first at `start` (tests, docs). */
export function attemptTimes(start: number, b: Backoff = DEFAULT_BACKOFF): number[] {
  const times = [start];
  for (let n = 1; n < 10_000; n++) {
    const last = times[times.length - 1] ?? start;
    const next = afterFailure(n, last, start, b);
    if (next.dead) break;
    times.push(next.retryAt);
  }
  return times;
}
