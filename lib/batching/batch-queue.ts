/**
 * A bounded in-memory queue drained in batches off the caller's path: {@link BatchQueue.offer} is O(1), never
 * waits and never throws; items are written `batchMax` at a time (a full batch at once, a partial one at most
 * `flushMs` after its first item), one write at a time; a full queue drops the item and reports it;
 * {@link BatchQueue.dispose} writes everything queued, then refuses more. The decision log and the case writer
 * are its two users.
 */
import type { Timers } from '../platform/timers';

/** Options of a {@link BatchQueue}. */
export interface BatchQueueOptions<T> {
  /** Items waiting at most; more are dropped (`onFull`). */
  readonly queueMax: number;
  /** Items per write at most. */
  readonly batchMax: number;
  /** Longest an item waits for its write, ms. */
  readonly flushMs: number;
  readonly timers: Timers;
  /**
   * Writes one batch. Should not throw: it counts its own failures; a throw drops the batch through
   * `onWriteError`.
   */
  readonly write: (batch: readonly T[]) => Promise<void>;
  /** An item refused because the queue is full or closed. Must not throw (a throw is swallowed). */
  readonly onFull: () => void;
  /** A batch whose `write` threw (`count` items lost). Must not throw. */
  readonly onWriteError: (count: number, err: unknown) => void;
}

/** A bounded batching queue (see the module comment). */
export class BatchQueue<T> {
  private queue: T[] = [];
  private timer: unknown;
  private writing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly o: BatchQueueOptions<T>) {}

  /** Items waiting to be written. */
  get size(): number {
    return this.queue.length;
  }

  /** Queues one item; `false` (and `onFull`) when the queue is full or closed. */
  offer(item: T): boolean {
    if (this.closed || this.queue.length >= this.o.queueMax) {
      try {
        this.o.onFull();
      } catch {
        // a handler's failure must not reach the caller
      }
      return false;
    }
    this.queue.push(item);
    if (this.queue.length >= this.o.batchMax) this.kick();
    else if (this.timer === undefined) this.timer = this.o.timers.setTimeout(() => this.kick(), this.o.flushMs);
    return true;
  }

  /** Starts draining unless a write is in flight (it drains the rest when it ends). */
  private kick(): void {
    if (this.timer !== undefined) {
      this.o.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.writing === undefined && this.queue.length > 0) this.writing = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.o.batchMax);
        try {
          await this.o.write(batch);
        } catch (err) {
          try {
            this.o.onWriteError(batch.length, err);
          } catch {
            // as above
          }
        }
        if (!this.closed && this.queue.length > 0 && this.queue.length < this.o.batchMax) break; // wait for the timer
      }
    } finally {
      this.writing = undefined;
      if (this.queue.length > 0) {
        if (this.closed || this.queue.length >= this.o.batchMax) this.kick();
        else this.timer ??= this.o.timers.setTimeout(() => this.kick(), this.o.flushMs);
      }
    }
  }

  /** Writes everything queued (bounded by the writer's own timeouts), then refuses further items. */
  async dispose(): Promise<void> {
    this.closed = true;
    this.kick();
    while (this.writing !== undefined) {
      await this.writing;
      this.kick();
    }
  }
}
