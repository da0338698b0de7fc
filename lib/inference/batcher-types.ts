/** Public types of the {@link MicroBatcher}: options, events, counters. */
import type { ErrorCode } from '../errors/errors';

/**
 * Why a batch was closed: `idle` (a worker was free: dispatched at once), `size` (reached the
 * maximum), `window` (the window since its first request expired), `deadline` (waiting longer would
 * miss its earliest deadline), `isolate` (a re-run of one request after its batch failed).
 */
export type CloseReason = 'idle' | 'size' | 'window' | 'deadline' | 'isolate';

/** Events the batcher emits (for telemetry). All durations in ms. */
export interface BatcherEvents {
  /** A batch was handed to the executor. `oldestWaitMs`: queue time of its oldest request. */
  batchStarted(e: { rows: number; requests: number; reason: CloseReason; oldestWaitMs: number; running: number }): void;
  /** A batch ended. `ms`: dispatch to result, as seen by the batcher. */
  batchFinished(e: { rows: number; requests: number; ms: number; ok: boolean; code?: ErrorCode }): void;
  /** A request was refused on arrival: the queue was full, or inference could not meet its deadline. */
  shed(e: { reason: 'queue_full' | 'deadline'; rows: number; queuedRows: number }): void;
  /** A queued request started after its (inference) deadline. It still runs. */
  expired(e: { rows: number; lateMs: number }): void;
}

/** Batching settings (from `BATCH_MAX_SIZE` / `BATCH_MAX_SIZE_GPU`, `BATCH_WINDOW_MS`, `INFERENCE_QUEUE_MAX`). */
export interface MicroBatcherOptions {
  /** Most rows in one batch (default setting 64; 32 on GPU). Larger requests are split. */
  readonly maxBatchSize: number;
  /** While every worker is busy, a batch closes this many ms after its first request (default setting 5). */
  readonly windowMs: number;
  /** Most rows waiting for a worker (default setting 2048); beyond it requests are shed with `overloaded`. */
  readonly queueMax: number;
}

/** Running totals since the batcher was created. */
export interface BatcherStats {
  readonly batches: number;
  readonly rows: number;
  readonly requests: number;
  readonly shedQueueFull: number;
  readonly shedDeadline: number;
  readonly expired: number;
  /** Rows waiting now (open and closed batches). */
  readonly queuedRows: number;
  /** Batches running now. */
  readonly running: number;
}
