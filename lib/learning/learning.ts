/**
 * The learning loop's runtime side: records every decided payment in the decision log and the drift
 * monitor, and stores labels. Built by `create-learning.ts`; the scorer reports decisions through
 * {@link Learning.scorerEvents}.
 */
import type { DecidedPayment, ScorerEvents } from '../scoring/scorer';
import type { DecisionLog, DecisionLogStats } from './decision-log';
import { toDecisionRecord } from './decision-record';
import type { DriftMonitor, PsiReading } from './drift-monitor';
import type { KeyedHash } from '../platform/keyed-hash';
import { parseLabels, type LabelsAdded, type LabelStore } from './labels';
import type { LearningStore } from './learning-store';

/** The parts of a {@link Learning}. */
export interface LearningParts {
  readonly store: LearningStore;
  /** `undefined` when the log is off (`DECISION_LOG_ENABLED=false`). */
  readonly log: DecisionLog | undefined;
  /**
   * `undefined` while the hash key could not be read: every decision is then dropped and counted, until
   * {@link Learning.useHashKey} gives it.
   */
  readonly hash: KeyedHash | undefined;
  readonly labels: LabelStore;
  readonly drift: DriftMonitor;
  /** Wall clock, ms (the record's `decidedAt`). */
  readonly wallClock: () => number;
  /** Counts a decision that could not even be queued (no key, a bug in building its record). */
  readonly lost: (reason: 'no_hash_key' | 'record_failed') => void;
  /** Stops reporting drift readings, and any background read of the hash key (on dispose). */
  readonly unwatch?: () => void;
}

/** The runtime learning loop of one engine. */
export class Learning {
  private hash: KeyedHash | undefined;

  constructor(private readonly p: LearningParts) {
    this.hash = p.hash;
  }

  /** Whether decisions are recorded (the log is on and has its hash key). */
  get recording(): boolean {
    return this.p.log !== undefined && this.hash !== undefined;
  }

  /** Gives the hash key read late (Key Vault answered after start): decisions are recorded from now on. */
  useHashKey(hash: KeyedHash): void {
    this.hash = hash;
  }

  /** The scorer's `decided` handler: drift, then the decision log. Never throws. */
  scorerEvents(): Partial<ScorerEvents> {
    return { decided: (d) => this.decided(d) };
  }

  private decided(d: DecidedPayment): void {
    try {
      this.p.drift.observe(d.manifest, d.row, d.result.score);
    } catch {
      // drift is best effort; the score is already decided
    }
    const log = this.p.log;
    if (log === undefined) return;
    if (this.hash === undefined) return this.p.lost('no_hash_key');
    try {
      const at = this.p.wallClock();
      log.append(toDecisionRecord(d, this.hash, at), at);
    } catch {
      this.p.lost('record_failed');
    }
  }

  /**
   * Validates and stores a `POST /api/labels` body; a label already stored for the same transaction changes nothing.
   * @throws AppError `validation_failed` naming every bad field, `payload_too_large`, `dependency_unavailable` (retry).
   */
  addLabels(body: unknown): Promise<LabelsAdded> {
    return this.p.labels.add(parseLabels(body));
  }

  /** PSI per model version, feature and score (the drift gauge reads it). */
  driftReadings(): PsiReading[] {
    return this.p.drift.readings();
  }

  /** Where the decision log and the labels are kept (the console's rules and drift pages read them). */
  get store(): LearningStore {
    return this.p.store;
  }

  /** The keyed hash of the log's id fields (`undefined` while its key could not be read). */
  get keyedHash(): KeyedHash | undefined {
    return this.hash;
  }

  /** The decision log's totals (`undefined` when it is off). */
  get logStats(): DecisionLogStats | undefined {
    return this.p.log?.stats;
  }

  /** Writes every queued record, then closes the store. */
  async dispose(): Promise<void> {
    this.p.unwatch?.();
    await this.p.log?.dispose();
    await this.p.store.dispose();
  }
}
