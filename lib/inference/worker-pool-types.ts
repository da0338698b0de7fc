/** Options, events and internal records of the {@link WorkerPool}. */
import type { Worker } from 'node:worker_threads';
import type { AppError } from '../errors/errors';
import type { SessionOptions } from './backend';
import type { TensorResult } from './tensor';
import type { FromWorker, WireTensor } from './worker-protocol';

/** Events a {@link WorkerPool} emits (for telemetry and logs). */
export interface WorkerPoolEvents {
  /** A worker loaded its session. `loadMs`: session creation time in the worker. */
  workerReady(e: { workerId: number; loadMs: number; replacement: boolean }): void;
  /** A worker ended without being asked to; `failedRuns` in-flight runs were rejected. It is replaced. */
  workerExit(e: { workerId: number; exitCode: number; failedRuns: number; reason: string }): void;
  /** A replacement worker could not load the model; another attempt follows after `retryInMs`. */
  respawnFailed(e: { workerId: number; reason: string; retryInMs: number }): void;
}

/** Options of {@link WorkerPool.create}. */
export interface WorkerPoolOptions {
  /** Worker threads (≥ 1), each holding its own session. */
  readonly size: number;
  readonly session: SessionOptions;
  /** Longest one run may take, queue included, before it fails and its worker is replaced, ms. Default 30 000. */
  readonly runTimeoutMs?: number;
  /**
   * Batches handed to one worker at a time (default 2): while it runs one, the next waits in the
   * worker's own queue, so the worker never idles waiting for a busy event loop to send more.
   */
  readonly depth?: number;
  /** Worker entry script. Default: the compiled `inference-worker.js` next to this module. */
  readonly workerScript?: string;
  readonly on?: Partial<WorkerPoolEvents>;
}

/** One run, queued or on a worker (internal to the pool). */
export interface Job {
  readonly id: number;
  readonly inputs: readonly WireTensor[];
  readonly outputs: readonly string[];
  /** Rows of the batch (reported as `batchSize`). */
  readonly rows: number;
  readonly enqueuedAt: number;
  readonly resolve: (r: TensorResult) => void;
  readonly reject: (e: AppError) => void;
  readonly timer: NodeJS.Timeout;
}

/** A worker thread as the pool tracks it (internal to the pool). */
export interface PoolWorker {
  readonly id: number;
  readonly worker: Worker;
  ready: boolean;
  /** Runs handed to this worker, oldest (running) first. */
  readonly jobs: Job[];
  lastError: string | undefined;
  /** Consecutive replacements of this worker's line that failed to load. */
  readonly failures: number;
  /** Called when the worker's last job ends (dispose waits on it). */
  idle: (() => void) | undefined;
  /** Already replaced (hung): its exit needs no handling. */
  retired: boolean;
  readonly readyPromise: Promise<Extract<FromWorker, { type: 'ready' }>>;
}

/** Longest wait before retrying a replacement worker that failed to load, ms. */
export const MAX_BACKOFF_MS = 5000;
