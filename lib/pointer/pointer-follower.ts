/**
 * The per-instance side of a pointer, for every artifact kind: listens for the store's announcements, reconciles
 * periodically (missed messages, instances started later) and runs the kind's pass (read the pointer, swap in what it
 * names), single-flight: changes announced during a pass coalesce into one more pass after it.
 * @module
 */
import { toAppError } from '../errors/errors';
import type { Timers } from '../time/timers';
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
}

/** Converges one instance on the pointer of one artifact name. */
export class PointerFollower {
  private running: Promise<void> | undefined;
  private again = false;
  private subscribed = false;
  private timer: unknown;
  private disposed = false;
  private readonly listener: PointerListener = (name) => {
    if (name === this.deps.name || name === '*') void this.converge();
  };

  /** @param apply one pass: read the pointer and swap in what it names (failures are the kind's to report). */
  constructor(
    private readonly deps: Followed,
    private readonly apply: () => Promise<void>,
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
      do {
        this.again = false;
        await this.apply();
      } while (this.again && !this.disposed);
    })().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
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
    await this.running?.catch(() => undefined);
  }
}
