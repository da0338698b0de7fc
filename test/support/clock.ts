import type { Timers } from '../../lib/platform/timers';

/** The default start of a {@link FakeClock}: 2026-11-30T10:00:00Z, ms. */
export const CLOCK_T0 = Date.UTC(2026, 10, 30, 10, 0, 0);

/** A wall clock the test moves by hand, ms. `t` may also be set directly. */
export class FakeClock {
  constructor(public t = CLOCK_T0) {}
  /** Current time, ms (a bound function: pass it as a `now`/`wallClock` dependency). */
  readonly now = (): number => this.t;
  /** Moves time forward by `ms` (fires no timers: see {@link FakeTimers.advance}). */
  advance(ms: number): void {
    this.t += ms;
  }
  /** Moves time forward by `ms` and returns the new time (a clock that ticks on each read). */
  tick(ms = 1): number {
    this.t += ms;
    return this.t;
  }
}

/** A timer scheduled on {@link FakeTimers}. */
export interface FakeTimer {
  readonly fn: () => void;
  /** Clock time it is due at, ms. */
  readonly at: number;
  /** The delay it was scheduled with, ms. */
  readonly ms: number;
}

/**
 * Hand-driven timers on a {@link FakeClock} (its own one, starting at 0, unless given): nothing runs until
 * {@link FakeTimers.runDue} (the timers due at the clock's time) or {@link FakeTimers.advance} (moves the clock,
 * firing due timers in order, each at its own time).
 */
export class FakeTimers implements Timers {
  /** The pending timers by handle, in creation order. */
  readonly pending = new Map<number, FakeTimer>();
  private seq = 0;
  constructor(readonly clock: FakeClock = new FakeClock(0)) {}

  /** The clock's current time, ms. */
  readonly now = (): number => this.clock.now();

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { fn, at: this.clock.now() + Math.max(0, ms), ms });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Delays (ms) of the pending timers, in creation order. */
  get delays(): number[] {
    return [...this.pending.values()].map((p) => p.ms);
  }

  /** Runs every timer due at the clock's time (the clock does not move). */
  runDue(): void {
    for (const [id, p] of [...this.pending]) {
      if (p.at <= this.clock.now()) {
        this.pending.delete(id);
        p.fn();
      }
    }
  }

  /**
   * Runs every pending timer now, whatever its delay (the clock does not move); timers they schedule stay pending.
   * Returns how many ran.
   */
  fireAll(): number {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const p of due) p.fn();
    return due.length;
  }

  /** Moves the clock forward by `ms`, firing due timers in order (each at its own time, the clock set to it). */
  advance(ms: number): void {
    const end = this.clock.now() + ms;
    for (;;) {
      let next: [number, FakeTimer] | undefined;
      for (const e of this.pending) if (e[1].at <= end && (next === undefined || e[1].at < next[1].at)) next = e;
      if (next === undefined) break;
      this.pending.delete(next[0]);
      this.clock.t = Math.max(this.clock.t, next[1].at);
      next[1].fn();
    }
    this.clock.t = end;
  }
}

/** Lets pending promise callbacks run (no timers involved). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}
