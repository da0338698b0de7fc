/**
 * Opens cases off the response path: the scorer's `decided` event queues a `review` payment ({@link CaseWriter.offer},
 * O(1), never throws, never waits); a bounded queue is drained in batches (one `INSERT … ON CONFLICT DO NOTHING`
 * per batch, one write at a time); a full queue or a failed write drops the cases and counts them; `dispose`
 * writes what is queued (a graceful stop loses nothing).
 */
import { BatchQueue } from '../batching/batch-queue';
import type { DecidedPayment, ScorerEvents } from '../scoring/scorer';
import type { Timers } from '../time/timers';
import type { CaseStore, NewCase } from './case-store';

/** Why cases were dropped. */
export type CaseDropReason = 'queue_full' | 'write_failed' | 'record_failed';

/** What the writer reports (telemetry counts them; the composition root logs drops). Never carries payment data. */
export interface CaseWriterEvents {
  /** A batch was written: `opened` new cases of `count` offered (the rest already had a case). */
  written(e: { readonly count: number; readonly opened: number; readonly ms: number }): void;
  /** `count` cases were dropped. */
  dropped(e: { readonly count: number; readonly reason: CaseDropReason; readonly error?: string }): void;
}

/** Options of a {@link CaseWriter}. */
export interface CaseWriterOptions {
  readonly store: CaseStore;
  /** Cases waiting at most (`CASE_QUEUE_MAX`); more are dropped. */
  readonly queueMax: number;
  /** Cases per write at most (`CASE_BATCH_MAX`). */
  readonly batchMax: number;
  /** Longest a case waits for its write, ms (`CASE_FLUSH_MS`). */
  readonly flushMs: number;
  readonly timers: Timers;
  /** Wall clock, ms (the case's decision and opening times). */
  readonly wallClock: () => number;
  /** Monotonic clock, ms (write durations). Default `performance.now`. */
  readonly now?: () => number;
  readonly on?: Partial<CaseWriterEvents>;
}

/** Totals since creation. */
export interface CaseWriterStats {
  readonly offered: number;
  readonly opened: number;
  readonly dropped: number;
  readonly queued: number;
}

/** The case a `review` decision opens (raw payment fields; they stay in the case store). */
export function toNewCase(d: DecidedPayment, decidedAt: number): NewCase {
  const r = d.result;
  return {
    transactionId: r.transactionId,
    payment: { ...d.event },
    score: r.score,
    decision: r.decision,
    reasons: r.reasons,
    rules: r.rules ?? [],
    ruleErrors: r.ruleErrors ?? [],
    model: r.model,
    ...(r.ruleset === undefined ? {} : { ruleset: r.ruleset }),
    ...(r.profile === undefined ? {} : { profile: r.profile }),
    ...(r.escalation === undefined ? {} : { escalation: r.escalation }),
    decidedAt,
  };
}

/** The case writer of one engine. */
export class CaseWriter {
  private readonly queue: BatchQueue<NewCase>;
  private offered = 0;
  private opened = 0;
  private dropped = 0;
  private readonly now: () => number;

  constructor(private readonly o: CaseWriterOptions) {
    this.now = o.now ?? (() => performance.now());
    this.queue = new BatchQueue<NewCase>({
      queueMax: o.queueMax,
      batchMax: o.batchMax,
      flushMs: o.flushMs,
      timers: o.timers,
      write: (batch) => this.write(batch),
      onFull: () => this.drop(1, 'queue_full'),
      onWriteError: (count, err) => this.drop(count, 'write_failed', err instanceof Error ? err.name : 'error'),
    });
  }

  get stats(): CaseWriterStats {
    return { offered: this.offered, opened: this.opened, dropped: this.dropped, queued: this.queue.size };
  }

  /** The scorer's `decided` handler: a final `review` opens a case. */
  scorerEvents(): Partial<ScorerEvents> {
    return {
      decided: (d) => {
        if (d.result.decision !== 'review') return;
        let c: NewCase;
        try {
          c = toNewCase(d, this.o.wallClock());
        } catch {
          this.offered++;
          return this.drop(1, 'record_failed');
        }
        this.offer(c);
      },
    };
  }

  /** Queues one case (O(1), never throws); dropped and counted when the queue is full or the writer closed. */
  offer(c: NewCase): void {
    this.offered++;
    this.queue.offer(c);
  }

  private drop(count: number, reason: CaseDropReason, error?: string): void {
    this.dropped += count;
    try {
      this.o.on?.dropped?.({ count, reason, ...(error === undefined ? {} : { error }) });
    } catch {
      // a handler's failure must not reach a score
    }
  }

  private async write(batch: readonly NewCase[]): Promise<void> {
    const t0 = this.now();
    const opened = await this.o.store.open(batch, this.o.wallClock()); // a throw: the queue drops and counts the batch
    this.opened += opened;
    try {
      this.o.on?.written?.({ count: batch.length, opened, ms: this.now() - t0 });
    } catch {
      // as above
    }
  }

  /** Writes everything queued, then refuses further cases. */
  async dispose(): Promise<void> {
    await this.queue.dispose();
  }
}
