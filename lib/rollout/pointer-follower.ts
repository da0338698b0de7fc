/**
 * The per-instance side of a pointer, for every artifact kind: listens for the store's announcements, reconciles
 * periodically (missed messages, instances started later) and runs the kind's pass (read the pointer, swap in what it
 * names), single-flight: changes announced during a pass coalesce into one more pass after it. A pass that reports
 * itself incomplete (the pointer or what it names could not be read yet) is retried soon, backing off up to a bound,
 * rather than only at the next reconcile period.
 * @module
 */
import { toAppError } from '../errors/errors';
import type { Timers } from '../platform/timers';
import type { PointerListener } from './pointer-store';

/** What a {@link PointerFollower} follows. */
export interface Followed {
  /** The artifact name followed (announcements of other names, except `*`, are ignored). */
  readonly name: string;
  readonly store: { subscribe(listener: PointerListener): Promise<boolean> };
  readonly timers: Timers;
  /** Reconcile period, ms. */
  readonly intervalMs: number;
}

/** What a kind adds to each period. */
export interface FollowerOptions {
  /** Each period, before its pass (e.g. flushing counters to the store). */
  readonly everyPeriod?: () => Promise<void>;
  readonly subscribeFailed?: (message: string) => void;
  /**
   * Retries after an incomplete pass (the pass resolved `false`): first after `firstMs`, doubling up to `maxMs` (at
   * most the reconcile period) while passes stay incomplete. Default none: the next period retries.
   */
  readonly retry?: { readonly firstMs: number; readonly maxMs: number };
}

/** Converges one instance on the pointer of one artifact name. */
export class PointerFollower {
  private running: Promise<void> | undefined;
  private again = false;
  private subscribed = false;
  private timer: unknown;
  private retryTimer: unknown;
  private retryMs: number | undefined;
  private disposed = false;
  private readonly listener: PointerListener = (name) => {
    if (name === this.deps.name || name === '*') void this.converge();
  };

  /**
   * @param apply one pass: read the pointer and swap in what it names (failures are the kind's to report); resolves
   *   `false` when the pass is incomplete (retried per {@link FollowerOptions.retry}).
   */
  constructor(
    private readonly deps: Followed,
    private readonly apply: () => Promise<boolean | void>,
    private readonly options: FollowerOptions = {},
  ) {}

  /** Subscribes, runs the first period now and schedules the next ones; resolves after the first pass. */
  start(): Promise<void> {
    return this.tick();
  }

  /** Reconciles now; resolves when this instance has applied the pointer as read after the call (or failed to). */
  converge(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    const run = (async () => {
      let complete: boolean | void;
      do {
        this.again = false;
        complete = await this.apply();
      } while (this.again && !this.disposed);
      this.afterPass(complete !== false);
    })().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  /** Schedules the retry of an incomplete pass (one at a time, backing off), or resets the back-off. */
  private afterPass(complete: boolean): void {
    const retry = this.options.retry;
    if (retry === undefined || this.disposed) return;
    if (complete) {
      this.retryMs = undefined;
      return;
    }
    if (this.retryTimer !== undefined) return; // one already pending
    const max = Math.min(retry.maxMs, this.deps.intervalMs);
    const ms = Math.min(this.retryMs ?? retry.firstMs, max);
    this.retryMs = Math.min(ms * 2, max);
    this.retryTimer = this.deps.timers.setTimeout(() => {
      this.retryTimer = undefined;
      void this.converge();
    }, ms);
  }

  /** One reconcile period: subscribe if not yet, the period's work, converge; then schedule the next. */
  private async tick(): Promise<void> {
    if (this.disposed) return;
    if (!this.subscribed)
      this.subscribed = await this.deps.store.subscribe(this.listener).catch((err: unknown) => {
        this.options.subscribeFailed?.(toAppError(err).message);
        return false;
      });
    await this.options.everyPeriod?.();
    await this.converge();
    if (!this.disposed) this.timer = this.deps.timers.setTimeout(() => void this.tick(), this.deps.intervalMs);
  }

  /** Stops the loop and waits for a pass under way. */
  async dispose(): Promise<void> {
    this.disposed = true;
    this.deps.timers.clearTimeout(this.timer);
    if (this.retryTimer !== undefined) this.deps.timers.clearTimeout(this.retryTimer);
    await this.running?.catch(() => undefined);
  }
}
