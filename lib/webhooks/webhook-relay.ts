/**
 * Delivers the webhook outbox (lib/webhooks/webhook-outbox.ts) after the case changes' commits: each pass claims a
 * bounded batch of due rows, sends them at once (the ordering rule keeps a case's later event out of the batch of its
 * earlier one), and marks each delivered, due again after its backoff, or dead-lettered once its retry window has
 * passed (lib/webhooks/webhook-backoff.ts). Webhooks are signed with every active secret of their endpoint; the
 * platform's topic rows go to the {@link TopicPublisher}. Delivery is at least once: a receiver dedupes by
 * `webhook-id`, which is the same on every attempt of an event to an endpoint.
 *
 * The relay is woken after a case change commits ({@link WebhookRelay.wake}); otherwise it runs when the next row is
 * due, at least every `pollMs`. `dispose` stops it and waits for a pass in flight.
 * @module
 */
import type { CaseEventType } from '../cases/case-events';
import { errorName } from '../cases/outbox-relay';
import type { SqlClient } from '../platform/sql/sql-client';
import type { Timers } from '../platform/timers';
import { afterFailure, DEFAULT_BACKOFF, retryDelay, type Backoff } from './webhook-backoff';
import { messageIdOf, WebhookOutbox, type ClaimedDelivery, type DeliveryTarget } from './webhook-outbox';
import { sendWebhook, type AttemptOutcome, type Fetch } from './webhook-sender';
import { signedHeaders } from './webhook-signing';

/** Where the platform's copy of the events goes (the Service Bus topic `case-events`). */
export interface TopicPublisher {
  /** Sends one event; message id `messageId` (the topic's duplicate detection drops a repeat). */
  publish(messageId: string, eventType: CaseEventType, payload: string): Promise<void>;
  dispose(): Promise<void>;
}

/** What the relay reports (telemetry and the log subscribe; never a payload, a url or a secret). */
export interface WebhookRelayEvents {
  delivered(e: {
    readonly target: 'webhook' | 'topic';
    readonly eventType: CaseEventType;
    readonly attempts: number;
  }): void;
  /** An attempt failed; the delivery is due again in `retryInMs`. */
  failed(e: {
    readonly target: 'webhook' | 'topic';
    readonly eventType: CaseEventType;
    readonly attempts: number;
    readonly retryInMs: number;
    readonly error: string;
  }): void;
  /** A delivery's last attempt failed: it is in the dead-letter list (`rows` counts the later events held with it). */
  deadLettered(e: {
    readonly target: 'webhook' | 'topic';
    readonly eventType: CaseEventType;
    readonly attempts: number;
    readonly error: string;
    readonly rows: number;
  }): void;
  /** A pass could not read or update the outbox; the next one runs in `retryInMs`. */
  passFailed(e: { readonly error: string; readonly retryInMs: number }): void;
}

/** Options of a {@link WebhookRelay}. */
export interface WebhookRelayOptions {
  /** The case database (obtained on each pass: throws while the store is not open). */
  readonly sql: () => Pick<SqlClient, 'query'>;
  readonly timers: Timers;
  /** Wall clock, ms since the epoch (the rows' times, the signatures' timestamps). */
  readonly wallClock: () => number;
  /** Default the global `fetch`. */
  readonly fetch?: Fetch;
  /** The platform's topic; absent: topic rows fail (`topic_not_configured`) until it is. */
  readonly topic?: TopicPublisher;
  /** An attempt's timeout, ms (capped at 30 s). Default 10 000. */
  readonly timeoutMs?: number;
  readonly backoff?: Backoff;
  /** Rows per pass. Default 20. */
  readonly batchMax?: number;
  /** The longest wait between passes, ms. Default 30 000. */
  readonly pollMs?: number;
  /** How long a delivered row is kept, ms. Default one day. */
  readonly keepDeliveredMs?: number;
  readonly on?: Partial<WebhookRelayEvents>;
}

/** One pass's outcome. */
export interface WebhookPass {
  readonly delivered: number;
  readonly failed: number;
  readonly dead: number;
  /** Whether the batch was full (more may be due now). */
  readonly full: boolean;
  /** When the next pass should run, ms from now (at most `pollMs`). */
  readonly nextInMs: number;
}

/** The relay of one engine's webhook outbox. */
export class WebhookRelay {
  private handle: unknown;
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;
  private closed = false;
  private passFailures = 0;

  constructor(private readonly o: WebhookRelayOptions) {}

  private get pollMs(): number {
    return this.o.pollMs ?? 30_000;
  }

  private get timeoutMs(): number {
    return this.o.timeoutMs ?? 10_000;
  }

  /** Starts delivering (a first pass right away). */
  start(): void {
    this.started = true;
    this.schedule(0);
  }

  /** A pass now (a case change just committed); coalesced with one in flight. No-op before `start`, after `dispose`. */
  wake(): void {
    if (!this.started || this.closed) return;
    if (this.running !== undefined) this.again = true;
    else this.schedule(0);
  }

  /** One pass: claim a batch, send each row, mark it; purge old delivered rows. @throws when the outbox fails. */
  async pass(): Promise<WebhookPass> {
    const batchMax = this.o.batchMax ?? 20;
    const at = this.o.wallClock();
    const outbox = new WebhookOutbox(this.o.sql());
    // the lease outlasts the attempt's timeout, so no other claim takes a row while it is being sent
    const rows = await outbox.claim(at, batchMax, 2 * this.timeoutMs + 30_000);
    const targets = await outbox.targets(rows.map((r) => r.endpointId));
    const outcomes = await Promise.all(rows.map((r) => this.attempt(r, targets.get(r.endpointId))));
    let delivered = 0;
    let failed = 0;
    let dead = 0;
    for (const [i, row] of rows.entries()) {
      const outcome = outcomes[i] ?? { ok: false, error: 'error' };
      const target = targets.get(row.endpointId)?.kind ?? 'webhook';
      const r = await this.mark(outbox, row, target, outcome);
      if (r === 'delivered') delivered++;
      else if (r === 'dead') dead++;
      else failed++;
    }
    dead += await outbox.deadBehindDead(this.o.wallClock(), 1000);
    await outbox.purgeDelivered(at - (this.o.keepDeliveredMs ?? 86_400_000), 1000);
    const full = rows.length === batchMax;
    const due = full ? at : await outbox.nextDue();
    const nextInMs = due === undefined ? this.pollMs : Math.min(this.pollMs, Math.max(0, due - this.o.wallClock()));
    return { delivered, failed, dead, full, nextInMs };
  }

  /** Stops the relay and waits for a pass in flight (its claimed rows are marked). */
  async dispose(): Promise<void> {
    this.closed = true;
    this.o.timers.clearTimeout(this.handle);
    this.handle = undefined;
    await this.running;
  }

  /** Sends one row to its target; never throws. */
  private async attempt(row: ClaimedDelivery, target: DeliveryTarget | undefined): Promise<AttemptOutcome> {
    const id = messageIdOf(row.id);
    if (target === undefined) return { ok: false, error: 'endpoint_missing' };
    if (target.kind === 'topic') {
      if (this.o.topic === undefined) return { ok: false, error: 'topic_not_configured' };
      try {
        await this.o.topic.publish(id, row.eventType, row.payload);
        return { ok: true, status: 200 };
      } catch (err) {
        return { ok: false, error: errorName(err) };
      }
    }
    if (target.secrets.length === 0) return { ok: false, error: 'no_secret' };
    const headers = signedHeaders(id, this.o.wallClock(), row.payload, target.secrets);
    return sendWebhook(target.url, headers, row.payload, {
      fetch: this.o.fetch ?? ((url, init) => fetch(url, init)),
      timers: this.o.timers,
      timeoutMs: this.timeoutMs,
    });
  }

  /** Marks a row after its attempt. */
  private async mark(
    outbox: WebhookOutbox,
    row: ClaimedDelivery,
    target: 'webhook' | 'topic',
    outcome: AttemptOutcome,
  ): Promise<'delivered' | 'failed' | 'dead'> {
    const base = { target, eventType: row.eventType, attempts: row.attempts };
    const t = this.o.wallClock();
    if (outcome.ok) {
      await outbox.delivered(row.id, t, outcome.status);
      this.emit(() => this.o.on?.delivered?.(base));
      return 'delivered';
    }
    const b = this.o.backoff ?? DEFAULT_BACKOFF;
    const next = afterFailure(row.attempts, t, row.windowStart, b);
    if (next.dead) {
      const rows = await outbox.dead(row.id, t, outcome.error, outcome.status);
      this.emit(() => this.o.on?.deadLettered?.({ ...base, error: outcome.error, rows }));
      return 'dead';
    }
    await outbox.failed(row.id, next.retryAt, outcome.error, outcome.status);
    this.emit(() => this.o.on?.failed?.({ ...base, retryInMs: next.retryAt - t, error: outcome.error }));
    return 'failed';
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
        const retryInMs = Math.min(retryDelay(this.passFailures, { ...DEFAULT_BACKOFF, firstMs: 1000 }), this.pollMs);
        this.emit(() => this.o.on?.passFailed?.({ error: errorName(err), retryInMs }));
        return this.schedule(retryInMs);
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
