/**
 * Metrics of the case writer: cases opened and dropped (never any payment data). Created by {@link Telemetry}
 * on its meter.
 */
import type { Meter } from '@opentelemetry/api';
import type { CaseWriterEvents } from '../cases/case-writer';

/** The case writer's instruments on one meter. */
export class CaseMetrics {
  private readonly opened;
  private readonly dropped;

  constructor(meter: Meter) {
    this.opened = meter.createCounter('cases.opened', { description: 'Review cases opened' });
    this.dropped = meter.createCounter('cases.dropped', {
      description:
        'Review cases dropped before they were stored (attribute reason: queue_full, write_failed, record_failed)',
    });
  }

  /** Handlers for the case writer's events. */
  events(): Partial<CaseWriterEvents> {
    return {
      written: (e) => this.opened.add(e.opened),
      dropped: (e) => this.dropped.add(e.count, { reason: e.reason }),
    };
  }
}
