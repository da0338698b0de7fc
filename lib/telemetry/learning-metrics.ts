/**
 * Metrics of the learning loop: decision-log writes and drops, the recent decisions' writes and drops, and the drift gauge (PSI per model version and
 * series, a feature name or `score`). Created by {@link Telemetry} on its meter.
 */
import type { Meter, ObservableResult } from '@opentelemetry/api';
import type { DecisionLogEvents } from '../learning/decision-log';
import type { PsiReading } from '../learning/drift-monitor';
import type { RecentDecisionsEvents } from '../learning/recent-decisions';

/** The learning loop's instruments on one meter. */
export class LearningMetrics {
  private readonly written;
  private readonly dropped;
  private readonly recentWritten;
  private readonly recentDropped;
  private readonly sources = new Set<() => readonly PsiReading[]>();

  constructor(meter: Meter) {
    this.written = meter.createCounter('learning.decisions.written', {
      description: 'Decision records written to the decision log',
    });
    this.dropped = meter.createCounter('learning.decisions.dropped', {
      description: 'Decision records dropped (attribute reason: queue_full, write_failed, no_hash_key, record_failed)',
    });
    this.recentWritten = meter.createCounter('learning.recent.written', {
      description: "Entries written to the users' recent decisions (the case page's recent payments)",
    });
    this.recentDropped = meter.createCounter('learning.recent.dropped', {
      description:
        "Entries of the users' recent decisions dropped (attribute reason: queue_full, write_failed, no_hash_key, entry_failed)",
    });
    meter
      .createObservableGauge('learning.drift.psi', {
        description:
          'Population stability index of live inputs vs training, over a sliding window (attributes model.version, series: a feature or score)',
      })
      .addCallback((r: ObservableResult) => {
        for (const source of this.sources)
          for (const p of source()) r.observe(p.psi, { 'model.version': p.modelVersion, series: p.series });
      });
  }

  /** Handlers for the decision log's events. */
  events(): Partial<DecisionLogEvents> {
    return {
      written: (e) => this.written.add(e.count),
      dropped: (e) => this.dropped.add(e.count, { reason: e.reason }),
    };
  }

  /** Handlers for the recent decisions' events. */
  recentEvents(): Partial<RecentDecisionsEvents> {
    return {
      written: (e) => this.recentWritten.add(e.count),
      dropped: (e) => this.recentDropped.add(e.count, { reason: e.reason }),
    };
  }

  /** Reports `source`'s PSI readings at each collection. @returns a function that stops it. */
  watchDrift(source: () => readonly PsiReading[]): () => void {
    this.sources.add(source);
    return () => this.sources.delete(source);
  }
}
