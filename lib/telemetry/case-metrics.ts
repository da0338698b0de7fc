/**
 * Metrics of the review cases: cases handed off to the intake queue and dropped by the writer (exactly: with those
 * still waiting they add up to the review decisions),
 * opened and rejected by the intake, its retries while the database is unavailable, verdicts and their outbox deliveries,
 * cases deleted past retention,
 * and the gauges of the sweep (open cases, the oldest open case's age, open cases past their SLA per queue). Never
 * any payment data. Created by
 * {@link Telemetry} on its meter.
 */
import type { Meter, ObservableResult } from '@opentelemetry/api';
import type { CaseSweepEvents } from '../cases/case-sweep';
import type { CaseWriterEvents } from '../cases/case-writer';
import type { CaseIntakeEvents } from '../cases/case-intake';
import type { OutboxRelayEvents } from '../cases/outbox-relay';

/** The case instruments on one meter. */
export class CaseMetrics {
  private readonly opened;
  private readonly dropped;
  private readonly handedOff;
  private readonly handOffFailed;
  private readonly rejected;
  private readonly intakeRetries;
  private readonly verdicts;
  private readonly deleted;
  private readonly sweepFailed;
  private readonly outboxDelivered;
  private readonly outboxFailed;
  private open: { count: number; oldestAgeSec: number } | undefined;
  /** Open cases past their SLA by queue at the last sweep; a queue once seen stays, at 0 when it has none. */
  private readonly breached = new Map<string, number>();

  constructor(meter: Meter) {
    this.opened = meter.createCounter('cases.opened', { description: 'Review cases opened by the intake' });
    this.dropped = meter.createCounter('cases.dropped', {
      description:
        'Review cases dropped before their hand-off to the intake queue, exactly (attribute reason: queue_full, handoff_failed, record_failed)',
    });
    this.handedOff = meter.createCounter('cases.handed_off', {
      description: 'Review cases handed to the durable intake queue (CASE_INTAKE_QUEUE)',
    });
    this.handOffFailed = meter.createCounter('cases.handoff.failed', {
      description: 'Hand-offs to the intake queue that failed and are retried (cases counted; attribute error)',
    });
    this.rejected = meter.createCounter('cases.rejected', {
      description: 'Intake messages that can never become a case, sent to the rejected queue (attribute reason)',
    });
    this.intakeRetries = meter.createCounter('cases.intake.retries', {
      description: 'Intake batches given back to the queue while the database was unavailable (attribute error)',
    });
    this.verdicts = meter.createCounter('cases.verdicts', {
      description: 'Cases closed with a verdict (attribute verdict: fraud, legit)',
    });
    this.deleted = meter.createCounter('cases.deleted', { description: 'Cases deleted past CASE_RETENTION_DAYS' });
    this.sweepFailed = meter.createCounter('cases.sweep.failed', {
      description: 'Sweeps of the case store that failed (attribute error)',
    });
    this.outboxDelivered = meter.createCounter('cases.outbox.delivered', {
      description: "Verdicts' labels and list entries delivered from the case outbox (attribute kind)",
    });
    this.outboxFailed = meter.createCounter('cases.outbox.failed', {
      description:
        'Deliveries from the case outbox that failed and are retried on their backoff (attribute kind, error; kind pass: the outbox could not be read)',
    });
    meter
      .createObservableGauge('cases.open', {
        description: 'Cases not closed yet (open or assigned), at the last sweep',
      })
      .addCallback((r: ObservableResult) => {
        if (this.open !== undefined) r.observe(this.open.count);
      });
    meter
      .createObservableGauge('cases.oldest_open.age', {
        description: 'Age of the oldest case not closed yet, by its decision time, at the last sweep (0 when none)',
        unit: 's',
      })
      .addCallback((r: ObservableResult) => {
        if (this.open !== undefined) r.observe(this.open.oldestAgeSec);
      });
    meter
      .createObservableGauge('cases.sla.breached', {
        description: 'Cases not closed yet whose queue SLA has run out, at the last sweep (attribute queue)',
      })
      .addCallback((r: ObservableResult) => {
        for (const [queue, count] of this.breached) r.observe(count, { queue });
      });
  }

  /** Handlers for the case writer's events. */
  writerEvents(): Partial<CaseWriterEvents> {
    return {
      handedOff: (e) => this.handedOff.add(e.count),
      handOffFailed: (e) => this.handOffFailed.add(e.count, { error: e.error }),
      dropped: (e) => this.dropped.add(e.count, { reason: e.reason }),
    };
  }

  /** Handlers for the intake's events. */
  intakeEvents(): Partial<CaseIntakeEvents> {
    return {
      written: (e) => this.opened.add(e.opened),
      rejected: (e) => this.rejected.add(e.count, { reason: e.reason }),
      retrying: (e) => this.intakeRetries.add(1, { error: e.error }),
    };
  }

  /** Handlers for the sweep's events. */
  sweepEvents(): Partial<CaseSweepEvents> {
    return {
      openCases: (e) => (this.open = { count: e.open, oldestAgeSec: e.oldestAgeSec }),
      slaBreached: (e) => {
        for (const q of this.breached.keys()) this.breached.set(q, 0);
        for (const q of e.byQueue) this.breached.set(q.queue, q.count);
      },
      deleted: (e) => this.deleted.add(e.count),
      failed: (e) => this.sweepFailed.add(1, { error: e.error }),
    };
  }

  /** Handlers for the verdict outbox relay's events. */
  outboxEvents(): Partial<OutboxRelayEvents> {
    return {
      delivered: (e) => this.outboxDelivered.add(1, { kind: e.kind }),
      failed: (e) => this.outboxFailed.add(1, { kind: e.kind, error: e.error }),
      passFailed: (e) => this.outboxFailed.add(1, { kind: 'pass', error: e.error }),
    };
  }

  /** Counts one verdict. */
  verdict(e: { readonly verdict: 'fraud' | 'legit' }): void {
    this.verdicts.add(1, { verdict: e.verdict });
  }
}
