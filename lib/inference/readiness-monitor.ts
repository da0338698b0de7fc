/**
 * Keeps readiness fresh in the background: every `intervalMs` it runs one sample inference through the
 * active version ({@link SessionManager.probe}) so that `GET /api/health/ready` answers from state the
 * engine already holds and never runs (or queues) anything on a request.
 */
import type { Timers } from '../platform/timers';
import type { SessionManager } from './session-manager';

/** Dependencies of a {@link ReadinessMonitor}. */
export interface ReadinessMonitorDeps {
  readonly sessions: Pick<SessionManager, 'probe'>;
  /** Period between sample inferences, ms (`HEALTH_PROBE_INTERVAL_SEC` × 1000, default 15 000). */
  readonly intervalMs: number;
  /** Timers (tests: a fake clock). */
  readonly timers: Timers;
}

/** Runs the readiness probe periodically. */
export class ReadinessMonitor {
  private timer: unknown;
  private running = false;
  private inFlight: Promise<unknown> | undefined;

  constructor(private readonly deps: ReadinessMonitorDeps) {}

  /** Starts the periodic probe (the first one after one period); idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule();
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.deps.timers.setTimeout(() => {
      this.inFlight = this.deps.sessions
        .probe()
        .catch(() => undefined) // probe records failures itself
        .finally(() => {
          this.inFlight = undefined;
          this.schedule();
        });
    }, this.deps.intervalMs);
  }

  /** Stops probing and waits for a probe under way. */
  async dispose(): Promise<void> {
    this.running = false;
    this.deps.timers.clearTimeout(this.timer);
    await this.inFlight;
  }
}
