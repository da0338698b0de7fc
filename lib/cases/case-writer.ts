/**
 * Hands cases off the response path to the durable intake queue (lib/cases/case-handoff.ts); the `caseIntake`
 * function writes them to the store. The scorer's `decided` event offers a `review` payment
 * ({@link CaseWriter.offer}: never throws, never waits for a network). With a local queue (the embedded bus's
 * journal) the case is handed off before the payment is answered; otherwise, or when that fails, it waits in a bounded
 * queue drained in batches, one hand-off at a time, retried with backoff (`retryBaseMs` doubling to `retryMaxMs`)
 * while the queue is unreachable. A full queue drops the case; each drop is counted and reported (`dropped`), exactly.
 * `dispose` hands off what is queued, one last try (a graceful stop loses nothing the queue accepts).
 */
import { BatchQueue } from '../batching/batch-queue';
import type { DecidedPayment, ScorerEvents } from '../scoring/scorer';
import type { Timers } from '../platform/timers';
import type { CaseHandOff } from './case-handoff';
import { caseSignalsOf, type CaseRulesets } from './case-signals';
import type { NewCase } from './case-store';

/** Why cases were dropped. */
export type CaseDropReason = 'queue_full' | 'handoff_failed' | 'record_failed';

/** What the writer reports (telemetry counts them; the composition root logs drops). Never carries payment data. */
export interface CaseWriterEvents {
  /** `count` cases were handed to the durable intake queue (`ms`: the hand-off's duration). */
  handedOff(e: { readonly count: number; readonly ms: number }): void;
  /** A hand-off failed (`count` cases kept and retried in `retryInMs`). */
  handOffFailed(e: { readonly count: number; readonly error: string; readonly retryInMs: number }): void;
  /** `count` cases were dropped (never handed off). */
  dropped(e: { readonly count: number; readonly reason: CaseDropReason; readonly error?: string }): void;
}

/** Options of a {@link CaseWriter}. */
export interface CaseWriterOptions {
  readonly handOff: CaseHandOff;
  /** Cases waiting at most (`CASE_QUEUE_MAX`); more are dropped. */
  readonly queueMax: number;
  /** Cases per hand-off at most (`CASE_BATCH_MAX`). */
  readonly batchMax: number;
  /** Longest a case waits for its hand-off, ms (`CASE_FLUSH_MS`). */
  readonly flushMs: number;
  /** First wait before a failed hand-off is tried again, ms; doubled each time. Default 200. */
  readonly retryBaseMs?: number;
  /** Longest wait between two tries, ms. Default 5 000. */
  readonly retryMaxMs?: number;
  readonly timers: Timers;
  /** Wall clock, ms (the case's decision time). */
  readonly wallClock: () => number;
  /** Monotonic clock, ms (hand-off durations). Default `performance.now`. */
  readonly now?: () => number;
  readonly on?: Partial<CaseWriterEvents>;
  /** The rulesets the instance holds: the one that decided names the signals its fired rules read. Default none. */
  readonly rulesets?: CaseRulesets;
}

/** Totals since creation: `offered` = `handedOff` + `dropped` + `queued` (+ the batch being handed off). */
export interface CaseWriterStats {
  readonly offered: number;
  readonly handedOff: number;
  readonly dropped: number;
  readonly queued: number;
}

/**
 * The case a `review` decision opens (raw payment fields; they stay in the case store), with its signals
 * (lib/cases/case-signals.ts; `rulesets`: where the fired rules' texts are found).
 */
export function toNewCase(d: DecidedPayment, decidedAt: number, rulesets?: CaseRulesets): NewCase {
  const r = d.result;
  const signals = caseSignalsOf(d, rulesets);
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
    ...(signals === undefined ? {} : { signals }),
  };
}

/** The case writer of one engine. */
export class CaseWriter {
  private readonly queue: BatchQueue<NewCase>;
  private offered = 0;
  private handedOff = 0;
  private dropped = 0;
  private closing = false;
  private wake: (() => void) | undefined;
  private retryHandle: unknown;
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
      onWriteError: (count, err) => this.drop(count, 'handoff_failed', errorName(err)),
    });
  }

  get stats(): CaseWriterStats {
    return { offered: this.offered, handedOff: this.handedOff, dropped: this.dropped, queued: this.queue.size };
  }

  /** The scorer's `decided` handler: a final `review` opens a case. */
  scorerEvents(): Partial<ScorerEvents> {
    return {
      decided: (d) => {
        if (d.result.decision !== 'review') return;
        let c: NewCase;
        try {
          c = toNewCase(d, this.o.wallClock(), this.o.rulesets);
        } catch {
          this.offered++;
          return this.drop(1, 'record_failed');
        }
        this.offer(c);
      },
    };
  }

  /**
   * Hands one case off now when the queue is local, else queues it (O(1), never throws); dropped and counted when
   * the queue is full or the writer closed.
   */
  offer(c: NewCase): void {
    this.offered++;
    const now = this.o.handOff.sendNow;
    if (now !== undefined && this.queue.size === 0 && !this.closing) {
      const t0 = this.now();
      try {
        now([c]);
        this.handedOff++;
        this.emit('handedOff', { count: 1, ms: this.now() - t0 });
        return;
      } catch {
        // the local queue refused (full, or its disk failed): the bounded queue retries it
      }
    }
    this.queue.offer(c);
  }

  private drop(count: number, reason: CaseDropReason, error?: string): void {
    this.dropped += count;
    this.emit('dropped', { count, reason, ...(error === undefined ? {} : { error }) });
  }

  private emit<K extends keyof CaseWriterEvents>(k: K, e: Parameters<CaseWriterEvents[K]>[0]): void {
    try {
      (this.o.on?.[k] as ((e: Parameters<CaseWriterEvents[K]>[0]) => void) | undefined)?.(e);
    } catch {
      // a handler's failure must not reach a score
    }
  }

  /** One batch: handed off, retried with backoff while the queue is unreachable; one last try once closing. */
  private async write(batch: readonly NewCase[]): Promise<void> {
    let delay = this.o.retryBaseMs ?? 200;
    for (;;) {
      const t0 = this.now();
      try {
        const { refused } = await this.o.handOff.send(batch);
        this.handedOff += batch.length - refused;
        this.emit('handedOff', { count: batch.length - refused, ms: this.now() - t0 });
        if (refused > 0) this.drop(refused, 'record_failed', 'too_large');
        return;
      } catch (err) {
        if (this.closing) throw err; // the queue drops and counts the batch (handoff_failed)
        this.emit('handOffFailed', { count: batch.length, error: errorName(err), retryInMs: delay });
        await this.sleep(delay);
        delay = Math.min(delay * 2, this.o.retryMaxMs ?? 5_000);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = () => {
        this.o.timers.clearTimeout(this.retryHandle);
        this.wake = undefined;
        resolve();
      };
      this.retryHandle = this.o.timers.setTimeout(() => this.wake?.(), ms);
    });
  }

  /** Hands off everything queued (a batch being retried gets one last try), then refuses further cases. */
  async dispose(): Promise<void> {
    this.closing = true;
    this.wake?.();
    await this.queue.dispose();
  }
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : 'error';
}
