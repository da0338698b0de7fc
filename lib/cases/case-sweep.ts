/**
 * The case store's periodic sweep (injected timers): deletes cases decided longer ago than the retention
 * (`CASE_RETENTION_DAYS`), and reads the open cases, the oldest open case's age and the open cases past their SLA
 * (per queue) for the gauges. Every
 * instance sweeps (the delete is idempotent); a failed sweep is reported and the next one runs on schedule.
 */
import type { Timers } from '../platform/timers';
import type { CaseStore } from './case-store';

/** What a sweep reports (telemetry turns them into gauges and counters; never any payment data). */
export interface CaseSweepEvents {
  /** Cases not closed yet, and the age of the oldest (by decision time), s; 0 when none. */
  openCases(e: { readonly open: number; readonly oldestAgeSec: number }): void;
  /** Cases not closed whose SLA deadline has passed, per queue (queues without such a case are not listed). */
  slaBreached(e: { readonly byQueue: readonly { readonly queue: string; readonly count: number }[] }): void;
  /** Cases deleted past the retention. */
  deleted(e: { readonly count: number }): void;
  /** A sweep failed (the store is unreachable); `error` is the error's name. */
  failed(e: { readonly error: string }): void;
}

/** Options of a {@link CaseSweep}. */
export interface CaseSweepOptions {
  readonly store: CaseStore;
  /** Time between sweeps, ms (`CASE_SWEEP_INTERVAL_SEC`). */
  readonly intervalMs: number;
  /** Cases decided longer ago are deleted, ms (`CASE_RETENTION_DAYS`). */
  readonly retentionMs: number;
  readonly timers: Timers;
  /** Wall clock, ms. */
  readonly wallClock: () => number;
  readonly on?: Partial<CaseSweepEvents>;
}

/** The periodic sweep of one engine's case store. */
export class CaseSweep {
  private handle: unknown;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly o: CaseSweepOptions) {}

  /** Runs a sweep now, then every `intervalMs` until {@link dispose}. */
  start(): void {
    this.tick();
  }

  private tick(): void {
    if (this.stopped) return;
    this.running = this.runOnce().finally(() => {
      this.running = undefined;
      if (!this.stopped) this.handle = this.o.timers.setTimeout(() => this.tick(), this.o.intervalMs);
    });
  }

  /** One sweep: retention, then the open cases and their SLA breaches. Never throws (a failure is reported). */
  async runOnce(): Promise<void> {
    try {
      const now = this.o.wallClock();
      const count = await this.o.store.deleteDecidedBefore(now - this.o.retentionMs);
      if (count > 0) this.o.on?.deleted?.({ count });
      const s = await this.o.store.openStats();
      const oldest = s.oldestDecidedAt === undefined ? now : Date.parse(s.oldestDecidedAt);
      this.o.on?.openCases?.({ open: s.open, oldestAgeSec: Math.max(0, Math.round((now - oldest) / 1000)) });
      this.o.on?.slaBreached?.({ byQueue: await this.o.store.slaBreaches(now) });
    } catch (err) {
      try {
        this.o.on?.failed?.({ error: err instanceof Error ? err.name : 'error' });
      } catch {
        // a handler's failure must not stop the sweep
      }
    }
  }

  /** Stops the schedule and waits for a sweep in flight. */
  async dispose(): Promise<void> {
    this.stopped = true;
    this.o.timers.clearTimeout(this.handle);
    await this.running;
  }
}
