/**
 * The decision log's write path: a bounded in-memory queue (lib/batching), drained in batches (one append per hour
 * partition per batch), one write at a time, flushed on dispose. Recording never waits, never throws and never
 * slows a score: when the queue is full or a write fails, the records are dropped and counted. Each record is
 * serialized when it is queued (a few µs per payment), so a batch write never blocks the event loop for the
 * time of serializing a thousand records at once.
 */
import { BatchQueue } from '../batching/batch-queue';
import type { Timers } from '../platform/timers';
import type { DecisionRecord } from './decision-record';
import { hourPrefix, type LearningStore } from './learning-store';

/** Why records were dropped. */
export type DropReason = 'queue_full' | 'write_failed' | 'no_hash_key' | 'record_failed';

/** What the decision log reports (telemetry counts them; the composition root logs them). */
export interface DecisionLogEvents {
  /** `count` records were written in one append. */
  written(e: { readonly count: number; readonly ms: number }): void;
  /** `count` records were dropped. Never carries a record. */
  dropped(e: { readonly count: number; readonly reason: DropReason; readonly error?: string }): void;
}

/** Options of a {@link DecisionLog}. */
export interface DecisionLogOptions {
  readonly store: LearningStore;
  /** This writer's name in partition names (the instance id, made path-safe). */
  readonly writer: string;
  /** Records waiting at most; more are dropped. */
  readonly queueMax: number;
  /** Records per batch at most. */
  readonly batchMax: number;
  /** Longest a record waits for its batch, ms. */
  readonly flushMs: number;
  readonly timers: Timers;
  /** Monotonic clock, ms (write durations). Default `performance.now`. */
  readonly now?: () => number;
  readonly on?: Partial<DecisionLogEvents>;
}

/** Totals since creation (tests and the shutdown line read them). */
export interface DecisionLogStats {
  readonly written: number;
  readonly dropped: number;
  readonly queued: number;
}

/** The decision log writer (one per engine). */
/** A serialized record and its partition. */
interface Line {
  readonly name: string;
  readonly text: string;
}

export class DecisionLog {
  private readonly queue: BatchQueue<Line>;
  private hourStart = Number.NaN;
  private hourName = '';
  private written = 0;
  private dropped = 0;
  private readonly now: () => number;

  constructor(private readonly o: DecisionLogOptions) {
    this.now = o.now ?? (() => performance.now());
    this.queue = new BatchQueue<Line>({
      queueMax: o.queueMax,
      batchMax: o.batchMax,
      flushMs: o.flushMs,
      timers: o.timers,
      write: (batch) => this.write(batch),
      onFull: () => this.drop(1, 'queue_full'),
      onWriteError: (count, err) => this.drop(count, 'write_failed', err instanceof Error ? err.name : 'error'),
    });
  }

  get stats(): DecisionLogStats {
    return { written: this.written, dropped: this.dropped, queued: this.queue.size };
  }

  /**
   * Queues one record (O(1), never throws). Dropped and counted when the queue is full or the log closed.
   * @param decidedAtMs the record's `decidedAt` as ms since the epoch, when the caller has it (saves parsing it back).
   */
  append(record: DecisionRecord, decidedAtMs?: number): void {
    let line: Line;
    try {
      line = { name: this.partition(decidedAtMs ?? Date.parse(record.decidedAt)), text: JSON.stringify(record) };
    } catch {
      return this.drop(1, 'record_failed');
    }
    this.queue.offer(line);
  }

  /** The partition of a decision time (the current hour's name is kept: one string per hour, not per record). */
  private partition(ms: number): string {
    const start = ms - (ms % 3_600_000);
    if (start !== this.hourStart) {
      this.hourStart = start;
      this.hourName = `${hourPrefix(start)}${this.o.writer}.jsonl`;
    }
    return this.hourName;
  }

  private drop(count: number, reason: DropReason, error?: string): void {
    this.dropped += count;
    try {
      this.o.on?.dropped?.({ count, reason, ...(error === undefined ? {} : { error }) });
    } catch {
      // a handler's failure must not reach a score
    }
  }

  private async write(batch: readonly Line[]): Promise<void> {
    const parts = new Map<string, string[]>();
    for (const l of batch) {
      const lines = parts.get(l.name);
      if (lines === undefined) parts.set(l.name, [l.text]);
      else lines.push(l.text);
    }
    for (const [name, lines] of parts) {
      const t0 = this.now();
      try {
        await this.o.store.append(name, `${lines.join('\n')}\n`);
        this.written += lines.length;
        this.o.on?.written?.({ count: lines.length, ms: this.now() - t0 });
      } catch (err) {
        this.drop(lines.length, 'write_failed', err instanceof Error ? err.name : 'error');
      }
    }
  }

  /** Writes everything queued (bounded by the store's own timeouts), then refuses further records. */
  async dispose(): Promise<void> {
    await this.queue.dispose();
  }
}
