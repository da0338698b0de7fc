/**
 * Admission by deadline: a request is refused only when it cannot finish within its own deadline, judged
 * from the work ahead of it and the rate at which this instance has been measured to finish work
 * (Little's law: the backlog drains in `backlog ÷ rate`). There is no fixed limit here: a caller willing to
 * wait 2 s is admitted behind a backlog that would refuse a caller that allows 50 ms.
 *
 * - **The work ahead** is every admitted request not yet answered (HTTP requests and Service Bus deliveries
 *   alike; a delivery weighs its number of messages), counted when it enters.
 * - **The rate** is measured, not configured: work finished per millisecond of busy time (time with work
 *   inside), over windows of `windowMs`. Only windows busy at least half the time, in which work queued (on
 *   average at least {@link QUEUED} units inside) and refusals did not outnumber answers, are samples (a
 *   backlog draining into a sliver of a window would overstate the rate): a lone request measures its
 *   latency, not the rate at which a backlog drains, and refusals take event-loop time from the work being
 *   measured (under a closed loop, refused callers come straight back). Idle time measures nothing.
 * - **The estimate is robust to a transient stall.** The rate the rule uses is the *largest* of the last
 *   `samples` window rates (default 5), and there is none until `minSamples` windows (default 3) have been
 *   sampled. One slow window (a GC pause, a slow Redis round trip, a cold JIT path) therefore never lowers
 *   the rate below what the fast windows around it measured, so it never causes a refusal that the
 *   instance's real rate would not; only a slowdown that lasts `samples` windows in a row (500 ms by
 *   default) lowers it. Taking the largest errs toward admitting, which is the side this rule wants to err
 *   on: an overstated rate admits a request that then finishes a little late, an understated one refuses
 *   work that would have been served. (A smoothed mean, the earlier estimator, let one slow window cut
 *   the rate by its weight at once.)
 * - **A cold instance never refuses**: without `minSamples` samples there is no rate, and without a rate
 *   everything is admitted. A rate without a new sample for `staleMs` is forgotten with its samples:
 *   admission starts over as a fresh instance does, so a low rate cannot keep itself alive by the
 *   refusals it causes.
 * - **The rule.** A request arriving with `remaining` ms of its deadline left is refused iff
 *   `backlog ÷ rate > remaining`. Without a measured rate, it is admitted (when unsure, admit), and so it is
 *   while fewer than `minBacklog` units are inside: the engine needs that much work in flight to keep its
 *   pipeline (Redis, batcher, workers) busy. Refusing below it would not shorten any wait, only lower the
 *   rate the next requests are judged by: under a closed loop whose refused callers come straight back,
 *   that feeds on itself.
 * - **The refusal** carries `Retry-After` = the time the current backlog needs to drain, rounded up to whole
 *   seconds (at least 1, at most `maxRetryAfterSec`).
 * - **Late answers.** A ticket knows its deadline: `release()` says whether it ended after it.
 *
 * Pure logic on an injected clock; property-tested in `test/admission/deadline-admission.property.test.ts`.
 * @module
 */

/** Settings of a {@link DeadlineAdmission}. */
export interface DeadlineAdmissionOptions {
  /** Length of a rate-measuring window, ms; default 100. */
  readonly windowMs?: number;
  /** How many of the last window rates the estimate is the largest of; default 5. */
  readonly samples?: number;
  /** Window rates needed before there is a rate (and so any refusal); default 3, at most `samples`. */
  readonly minSamples?: number;
  /** Largest `Retry-After` of a refusal, s; default 30. */
  readonly maxRetryAfterSec?: number;
  /** Never refuse while fewer than this many units are inside (`ADMISSION_MIN_INFLIGHT`); default 1. */
  readonly minBacklog?: number;
  /** A measured rate without a new sample for this long is forgotten, ms; default 1000. */
  readonly staleMs?: number;
}

/** An admitted request (or delivery). `release()` once it is answered; only the first call counts. */
export interface DeadlineTicket {
  /** When it reached the app, ms on the admission's clock: where its deadline starts. */
  readonly at: number;
  /** Its absolute deadline, ms on the same clock (`Infinity` for work without a deadline). */
  readonly deadlineAt: number;
  /**
   * @param served whether it was served (a 200 or other success), not failed or refused; default true.
   * @returns whether it was served after its deadline (a late answer).
   */
  release(served?: boolean): boolean;
}

/** Why a request was refused: the numbers the rule compared. */
export interface DeadlineRefusal {
  /** Work ahead of the request when it arrived. */
  readonly backlog: number;
  /** Measured rate, units per ms. */
  readonly rate: number;
  /** What was left of its deadline, ms. */
  readonly remainingMs: number;
  /** `Retry-After`, s: the backlog's drain time rounded up. */
  readonly retryAfterSec: number;
}

/** A decision of {@link DeadlineAdmission.tryAdmit}. */
export type DeadlineDecision =
  | { readonly admitted: true; readonly ticket: DeadlineTicket }
  | { readonly admitted: false; readonly refusal: DeadlineRefusal };

/** Counters of a {@link DeadlineAdmission}. */
export interface DeadlineAdmissionStats {
  /** Work inside now, units. */
  readonly backlog: number;
  /** Measured rate, units per second (`null` until measured). */
  readonly ratePerSec: number | null;
  readonly admitted: number;
  readonly refused: number;
  /** Admitted requests served after their deadline. */
  readonly late: number;
}

/** Events for telemetry. */
export interface DeadlineAdmissionEvents {
  /** A request was refused: it could not finish within its deadline. */
  refused(e: DeadlineRefusal): void;
  /** A request was served after its deadline, `overMs` past it. */
  late(e: { overMs: number }): void;
}

/** Average units inside a window for its rate to count: below it, work did not queue. */
export const QUEUED = 2;

/** The deadline admission (see the module comment). */
export class DeadlineAdmission {
  private units = 0;
  private measured: number | undefined;
  /** The last window rates, oldest first (at most `samples`). */
  private readonly recent: number[] = [];
  private readonly windowMs: number;
  private readonly samples: number;
  private readonly minSamples: number;
  private readonly maxRetryAfterSec: number;
  private readonly minBacklog: number;
  private readonly staleMs: number;
  private sampledAt = Number.NEGATIVE_INFINITY;
  private windowRefused = 0;
  /** The current window: its start, the units finished, busy time and the integral of units inside over it. */
  private windowStart: number;
  private done = 0;
  private busyMs = 0;
  private unitMs = 0;
  private lastChange: number;
  private counts = { admitted: 0, refused: 0, late: 0 };

  constructor(
    options: DeadlineAdmissionOptions = {},
    private readonly now: () => number = () => performance.now(),
    private readonly on: Partial<DeadlineAdmissionEvents> = {},
  ) {
    this.windowMs = Math.max(1, options.windowMs ?? 100);
    this.samples = Math.max(1, Math.floor(options.samples ?? 5));
    this.minSamples = Math.min(this.samples, Math.max(1, Math.floor(options.minSamples ?? 3)));
    this.maxRetryAfterSec = Math.max(1, Math.floor(options.maxRetryAfterSec ?? 30));
    this.minBacklog = Math.max(1, options.minBacklog ?? 1);
    this.staleMs = Math.max(this.windowMs, options.staleMs ?? 1000);
    this.windowStart = this.lastChange = now();
  }

  /** The admission's clock, ms: what `arrivedAt` of {@link tryAdmit} is read on. */
  clock(): number {
    return this.now();
  }

  /** Work inside now (admitted, not yet released), units. */
  get backlog(): number {
    return this.units;
  }

  /** The measured rate, units per ms: the largest of the last `samples` window rates; `undefined` until `minSamples` windows with queued work have ended. */
  get rate(): number | undefined {
    return this.measured;
  }

  get stats(): DeadlineAdmissionStats {
    return {
      backlog: this.units,
      ratePerSec: this.measured === undefined ? null : Math.round(this.measured * 1000 * 10) / 10,
      ...this.counts,
    };
  }

  /**
   * Decides for one request with a deadline of `deadlineMs` that reached the app at `arrivedAt`
   * (default now): refused iff the backlog ahead of it (at least `minBacklog`), at the measured rate, takes
   * longer than what is left of its deadline. Never waits.
   */
  tryAdmit(deadlineMs: number, arrivedAt?: number, weight = 1): DeadlineDecision {
    const now = this.now();
    this.advance(now);
    const at = arrivedAt ?? now;
    const remainingMs = at + deadlineMs - now;
    const rate = this.measured;
    if (rate !== undefined && this.units >= this.minBacklog && this.units / rate > remainingMs) {
      this.counts.refused++;
      this.windowRefused++;
      const refusal = { backlog: this.units, rate, remainingMs, retryAfterSec: this.retryAfterSec(rate) };
      this.on.refused?.(refusal);
      return { admitted: false, refusal };
    }
    return { admitted: true, ticket: this.enter(weight, at, at + deadlineMs) };
  }

  /** Admits work that has no deadline and is never refused here (a Service Bus delivery): it counts as work ahead. */
  enterWithoutDeadline(weight = 1): DeadlineTicket {
    const now = this.now();
    this.advance(now);
    return this.enter(weight, now, Number.POSITIVE_INFINITY);
  }

  /** `Retry-After` for the current backlog, s (at least 1). */
  retryAfterSec(rate = this.measured): number {
    if (rate === undefined || rate <= 0) return 1;
    return Math.min(this.maxRetryAfterSec, Math.max(1, Math.ceil(this.units / rate / 1000)));
  }

  private enter(weight: number, at: number, deadlineAt: number): DeadlineTicket {
    const w = Math.max(1, weight);
    this.units += w;
    this.counts.admitted++;
    let released = false;
    let late = false;
    return {
      at,
      deadlineAt,
      release: (served = true) => {
        if (released) return late;
        released = true;
        const now = this.now();
        this.advance(now);
        this.units -= w;
        this.done += w;
        late = served && now > deadlineAt;
        if (late) {
          this.counts.late++;
          this.on.late?.({ overMs: now - deadlineAt });
        }
        return late;
      },
    };
  }

  /** Accounts busy time up to `now` and closes the window when it has lasted `windowMs`. */
  private advance(now: number): void {
    const dt = Math.max(0, now - this.lastChange);
    if (this.units > 0) {
      this.busyMs += dt;
      this.unitMs += this.units * dt;
    }
    this.lastChange = now;
    if (now - this.windowStart < this.windowMs) return;
    // a sample needs a window mostly busy (answers of work admitted earlier, crowded into a sliver of busy
    // time as a backlog drains, would overstate the rate) in which work queued
    const busy = this.busyMs >= (now - this.windowStart) / 2;
    const queued = busy && this.unitMs / this.busyMs >= QUEUED;
    if (this.done > 0 && queued && this.windowRefused <= this.done) {
      this.recent.push(this.done / this.busyMs);
      if (this.recent.length > this.samples) this.recent.shift();
      this.measured = this.recent.length >= this.minSamples ? Math.max(...this.recent) : undefined;
      this.sampledAt = now;
    } else if (this.recent.length > 0 && now - this.sampledAt > this.staleMs) {
      // nothing measured it for staleMs: start over as a fresh instance (when unsure, admit)
      this.recent.length = 0;
      this.measured = undefined;
    }
    this.windowStart = now;
    this.windowRefused = 0;
    this.done = 0;
    this.busyMs = 0;
    this.unitMs = 0;
  }
}
