/**
 * Delivers the case outbox (lib/cases/case-outbox.ts) after the verdicts' commits: each pass claims a bounded batch
 * of due rows, hands each to `deliver` (the labels store, the lists), and marks it delivered, or due again after an
 * exponential backoff of its own (1 s doubling to 5 min by default). Delivery is at least once: a row whose delivery
 * succeeded but whose mark failed, or whose instance died, is delivered again, so `deliver` must be idempotent (a
 * label is stored once per transaction and label; a list addition sets the same entry again).
 *
 * The relay is woken right after a verdict commits ({@link OutboxRelay.wake}); otherwise it runs when the next row is
 * due, at least every `pollMs` (rows left by another instance, backoffs). Delivered rows are kept `keepDeliveredMs`
 * (a day by default), then deleted. `dispose` stops it and waits for a pass in flight.
 * @module
 */
import { AppError } from '../errors/errors';
import type { Timers } from '../platform/timers';
import { CaseOutbox, type OutboxMessage } from './case-outbox';
import type { SqlClient } from '../platform/sql/sql-client';

/** What the relay reports (telemetry and the log subscribe; never any payload data). */
export interface OutboxRelayEvents {
  /** A row was delivered, at its `attempts`-th claim. */
  delivered(e: { readonly kind: OutboxMessage['kind']; readonly attempts: number }): void;
  /** A row's delivery failed; it is due again in `retryInMs`. `error`: the error's code or name. */
  failed(e: {
    readonly kind: OutboxMessage['kind'];
    readonly attempts: number;
    readonly retryInMs: number;
    readonly error: string;
  }): void;
  /** A pass could not read or update the outbox (the database is down); the next one runs in `retryInMs`. */
  passFailed(e: { readonly error: string; readonly retryInMs: number }): void;
}

/** Options of an {@link OutboxRelay}. */
export interface OutboxRelayOptions {
  /** The case database (obtained on each pass: throws while the store is not open). */
  readonly sql: () => Pick<SqlClient, 'query'>;
  /** Hands one message to its store. Must be idempotent (delivery is at least once). */
  readonly deliver: (m: OutboxMessage) => Promise<void>;
  readonly timers: Timers;
  /** Wall clock, ms since the epoch (the rows' times). */
  readonly wallClock: () => number;
  /** Rows per pass. Default 50. */
  readonly batchMax?: number;
  /** A failed row's first retry, ms (doubling per attempt). Default 1 000. */
  readonly firstRetryMs?: number;
  /** The longest backoff, ms. Default 300 000. */
  readonly maxRetryMs?: number;
  /** How long a claimed row is held before another claim may take it, ms. Default 60 000. */
  readonly leaseMs?: number;
  /** The longest wait between passes, ms. Default 30 000. */
  readonly pollMs?: number;
  /** How long a delivered row is kept, ms. Default one day. */
  readonly keepDeliveredMs?: number;
  readonly on?: Partial<OutboxRelayEvents>;
}

/** One pass's outcome. */
export interface RelayPass {
  readonly delivered: number;
  readonly failed: number;
  /** Whether the batch was full (more may be due now). */
  readonly full: boolean;
  /** When the next pass should run, ms from now (at most `pollMs`). */
  readonly nextInMs: number;
}

/** The name of an error, for the outbox's `last_error` and the events: its code or class, never its data. */
export function errorName(err: unknown): string {
  if (err instanceof AppError) return err.code;
  return err instanceof Error ? err.name : 'error';
}

/** The relay of one engine's case outbox. */
export class OutboxRelay {
  private handle: unknown;
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;
  private closed = false;
  private passFailures = 0;

  constructor(private readonly o: OutboxRelayOptions) {}

  private get pollMs(): number {
    return this.o.pollMs ?? 30_000;
  }

  /** Starts delivering (a first pass right away). */
  start(): void {
    this.started = true;
    this.schedule(0);
  }

  /** A pass now (a verdict just committed); coalesced with one in flight. No-op before `start` or after `dispose`. */
  wake(): void {
    if (!this.started || this.closed) return;
    if (this.running !== undefined) this.again = true;
    else this.schedule(0);
  }

  /** One pass: claim a batch, deliver each row, mark it; purge old delivered rows. @throws when the outbox fails. */
  async pass(): Promise<RelayPass> {
    const batchMax = this.o.batchMax ?? 50;
    const at = this.o.wallClock();
    const outbox = new CaseOutbox(this.o.sql());
    const rows = await outbox.claim(at, batchMax, this.o.leaseMs ?? 60_000);
    let delivered = 0;
    let failed = 0;
    for (const row of rows) {
      try {
        await this.o.deliver(row);
      } catch (err) {
        const retryInMs = this.backoff(row.attempts);
        await outbox.failed(row.id, this.o.wallClock() + retryInMs, errorName(err));
        failed++;
        this.emit(() =>
          this.o.on?.failed?.({ kind: row.kind, attempts: row.attempts, retryInMs, error: errorName(err) }),
        );
        continue;
      }
      await outbox.delivered(row.id, this.o.wallClock());
      delivered++;
      this.emit(() => this.o.on?.delivered?.({ kind: row.kind, attempts: row.attempts }));
    }
    await outbox.purgeDelivered(at - (this.o.keepDeliveredMs ?? 86_400_000), 1000);
    const full = rows.length === batchMax;
    const due = full ? at : await outbox.nextDue();
    const nextInMs = due === undefined ? this.pollMs : Math.min(this.pollMs, Math.max(0, due - this.o.wallClock()));
    return { delivered, failed, full, nextInMs };
  }

  /** Stops the relay and waits for a pass in flight (its claimed rows are marked). */
  async dispose(): Promise<void> {
    this.closed = true;
    this.o.timers.clearTimeout(this.handle);
    this.handle = undefined;
    await this.running;
  }

  private backoff(attempts: number): number {
    const first = this.o.firstRetryMs ?? 1_000;
    return Math.min(first * 2 ** Math.max(0, Math.min(attempts - 1, 30)), this.o.maxRetryMs ?? 300_000);
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.o.timers.clearTimeout(this.handle);
    this.handle = this.o.timers.setTimeout(() => {
      this.handle = undefined;
      this.run();
    }, ms);
  }

  private run(): void {
    if (this.closed) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
  }

  /** Passes while more is due now or a wake came meanwhile, then waits for the next due row (or retries a failure). */
  private async loop(): Promise<void> {
    for (;;) {
      this.again = false;
      let waitMs: number;
      try {
        const p = await this.pass();
        this.passFailures = 0;
        waitMs = p.full ? 0 : p.nextInMs;
      } catch (err) {
        this.passFailures++;
        const retryInMs = Math.min(this.backoff(this.passFailures), this.pollMs);
        this.emit(() => this.o.on?.passFailed?.({ error: errorName(err), retryInMs }));
        return this.schedule(retryInMs); // a wake meanwhile does not hurry a database that is down
      }
      if (this.closed) return;
      if (waitMs > 0 && !this.again) return this.schedule(waitMs);
    }
  }

  private emit(fn: () => void): void {
    try {
      fn();
    } catch {
      // a subscriber's failure never stops the delivery
    }
  }
}
