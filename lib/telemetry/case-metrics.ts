/**
 * Metrics of the review cases: cases opened and dropped by the writer, verdicts, cases deleted past retention,
 * and the gauges of the sweep (open cases, the oldest open case's age). Never any payment data. Created by
 * {@link Telemetry} on its meter.
 */
import type { Meter, ObservableResult } from '@opentelemetry/api';
import type { CaseSweepEvents } from '../cases/case-sweep';
import type { CaseWriterEvents } from '../cases/case-writer';

/** The case instruments on one meter. */
export class CaseMetrics {
  private readonly opened;
  private readonly dropped;
  private readonly verdicts;
  private readonly deleted;
  private readonly sweepFailed;
  private open: { count: number; oldestAgeSec: number } | undefined;

  constructor(meter: Meter) {
    this.opened = meter.createCounter('cases.opened', { description: 'Review cases opened' });
    this.dropped = meter.createCounter('cases.dropped', {
      description:
        'Review cases dropped before they were stored (attribute reason: queue_full, write_failed, record_failed)',
    });
    this.verdicts = meter.createCounter('cases.verdicts', {
      description: 'Cases closed with a verdict (attribute verdict: fraud, legit)',
    });
    this.deleted = meter.createCounter('cases.deleted', { description: 'Cases deleted past CASE_RETENTION_DAYS' });
    this.sweepFailed = meter.createCounter('cases.sweep.failed', {
      description: 'Sweeps of the case store that failed (attribute error)',
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
  }

  /** Handlers for the case writer's events. */
  writerEvents(): Partial<CaseWriterEvents> {
    return {
      written: (e) => this.opened.add(e.opened),
      dropped: (e) => this.dropped.add(e.count, { reason: e.reason }),
    };
  }

  /** Handlers for the sweep's events. */
  sweepEvents(): Partial<CaseSweepEvents> {
    return {
      openCases: (e) => (this.open = { count: e.open, oldestAgeSec: e.oldestAgeSec }),
      deleted: (e) => this.deleted.add(e.count),
      failed: (e) => this.sweepFailed.add(1, { error: e.error }),
    };
  }

  /** Counts one verdict. */
  verdict(e: { readonly verdict: 'fraud' | 'legit' }): void {
    this.verdicts.add(1, { verdict: e.verdict });
  }
}
