import { AppError, toAppError } from '../errors/errors';
import { refTimers, type Timers } from '../platform/timers';
import type { BackendInfo, InferenceBackend, RunOptions, RunResult } from './backend';
import type { BatchExecutor } from './batch-executor';
import type { BatcherEvents, BatcherStats, CloseReason, MicroBatcherOptions } from './batcher-types';
import { BatchQueue, pendingRequest, type Batch, type Part, type PendingRequest } from './batch-queue';
import { expectedWait, RunEstimator } from './run-estimator';
import { scoreRows } from './score-rows';
import { batchKey, checkRequest, type TensorRequest, type TensorResult } from './tensor';
import { batchRequest, deliverRows, inferenceDeadline, outputProblem } from './batch-tensors';

/** Dependencies of a {@link MicroBatcher}. */
export interface MicroBatcherDeps {
  /** Runs batches: a worker pool, or an in-process session (concurrency 1). Disposed with the batcher. */
  readonly executor: BatchExecutor;
  readonly options: MicroBatcherOptions;
  /** Monotonic clock, ms. Default `performance.now`. */
  readonly now?: () => number;
  /** Timers. Default the process's. */
  readonly scheduler?: Timers;
  readonly on?: Partial<BatcherEvents>;
}

const retired = (): AppError =>
  new AppError('model_not_ready', 'This model version has been retired; retry.', { retryAfterSec: 1 });
const queueFull = (): AppError =>
  new AppError('overloaded', 'The inference queue is full; retry shortly.', { retryAfterSec: 1 });
const tooLate = (): AppError =>
  new AppError('deadline_exceeded', 'The request cannot be scored within its deadline; retry shortly.', {
    retryAfterSec: 1,
  });

/**
 * Adaptive micro-batcher in front of a worker pool (or an in-process session); itself an
 * {@link InferenceBackend}, shared by every trigger.
 *
 * - A free worker gets work at once: no added delay when idle.
 * - While every worker is busy, requests accumulate in a bounded queue. The open batch closes at
 *   `maxBatchSize` rows, `windowMs` after its first request, or earlier when waiting longer would
 *   miss its earliest deadline; at most one closed batch per worker waits, so under overload batches
 *   grow to the maximum size.
 * - It refuses only what inference itself cannot meet: a request is refused at once
 *   (`deadline_exceeded`, 503 + Retry-After) when the predicted wait for the rows ahead plus its own
 *   run, from the executor's learned run time per batch size and its concurrency, exceeds the
 *   request's whole budget (deadline − arrival at the engine). Time the request lost before it got
 *   here (a late event loop) is forgiven: its inference deadline is `max(deadline, now + budget)`.
 *   A request that arrives at a full queue is refused with `overloaded`. Once queued, a request
 *   always runs, even if it starts late (that is counted as `expired`). When unsure (nothing learned
 *   yet, or a worker idle), it admits.
 * - Each caller gets its own rows back. If a batch fails with a non-transient error, each of its
 *   requests is re-run alone, so one bad request fails only itself.
 */
export class MicroBatcher implements InferenceBackend {
  private readonly queue: BatchQueue;
  private readonly inflight = new Set<{ readonly startedAt: number; readonly rows: number }>();
  private readonly estimator = new RunEstimator();
  private readonly now: () => number;
  private readonly scheduler: Timers;
  private readonly max: number;
  private timer: unknown;
  private timerAt = Number.NaN;
  private disposed = false;
  private drained: (() => void) | undefined;
  private alone = 0;
  private counts = { batches: 0, rows: 0, requests: 0, shedQueueFull: 0, shedDeadline: 0, expired: 0 };

  constructor(private readonly deps: MicroBatcherDeps) {
    this.now = deps.now ?? (() => performance.now());
    this.scheduler = deps.scheduler ?? refTimers;
    this.max = Math.max(1, Math.floor(deps.options.maxBatchSize));
    this.queue = new BatchQueue(this.max);
  }

  /** The executor's model information. */
  get info(): BackendInfo {
    return this.deps.executor.info;
  }

  /** Running totals and current queue state. */
  get stats(): BatcherStats {
    return { ...this.counts, queuedRows: this.queue.rows, running: this.inflight.size };
  }

  /** Scores `rows` float32 rows: the scorer's call, through {@link infer}. */
  run(input: Float32Array, rows: number, options: RunOptions = {}): Promise<RunResult> {
    return scoreRows(this, input, rows, options);
  }

  /**
   * Queues a request. With `request.rows` it may share a batch with other requests of the same inputs
   * shape (rows concatenated along the batch axis, outputs split back per request); without, it runs alone.
   * Resolves with this request's outputs and its timing (`queueMs`: waiting before its batch ran;
   * `inferenceMs`: the batch's inference; `batchSize`: rows in that batch).
   * @throws AppError `overloaded` (queue full), `deadline_exceeded`, `inference_failed`, `model_not_ready` (retired).
   */
  infer(request: TensorRequest, options: RunOptions = {}): Promise<TensorResult> {
    if (this.disposed) return Promise.reject(retired());
    try {
      checkRequest(request);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const rows = request.rows ?? 1;
    if (rows === 0) return Promise.resolve({ outputs: [], timing: { queueMs: 0, inferenceMs: 0, batchSize: 0 } });
    const now = this.now();
    const deadline = inferenceDeadline(options, now);
    const queued = this.queue.rows;
    if (queued > 0 && queued + rows > this.deps.options.queueMax) {
      this.counts.shedQueueFull++;
      this.deps.on?.shed?.({ reason: 'queue_full', rows, queuedRows: queued });
      return Promise.reject(queueFull());
    }
    // A request that finds a worker idle always runs (and keeps the estimates fresh), unless it is larger
    // than a batch (it then needs several runs); others must fit.
    const idle = queued === 0 && this.inflight.size < this.deps.executor.concurrency && rows <= this.max;
    if (!idle && now + this.eta(rows) > deadline) {
      this.counts.shedDeadline++;
      this.deps.on?.shed?.({ reason: 'deadline', rows, queuedRows: queued });
      return Promise.reject(tooLate());
    }
    return new Promise<TensorResult>((resolve, reject) => {
      const key = request.rows === undefined ? `alone:${++this.alone}` : batchKey(request);
      this.queue.add(pendingRequest(request, key, rows, deadline, now, resolve, reject));
      this.counts.requests++;
      this.pump();
    });
  }

  /** Refuses new work, rejects queued requests (`model_not_ready`, retryable), waits for running batches, then disposes the executor. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.clearTimer();
    for (const p of this.queue.clear()) this.settle(p.req, retired());
    if (this.inflight.size > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    await this.deps.executor.dispose();
  }

  /** Idle workers get the next batch at once (the open one if none is closed); then closed batches fill the executor's pipeline. */
  private dispatch(c: number): void {
    while (this.inflight.size < c) {
      const batch = this.queue.next();
      if (batch === undefined) break;
      this.start(batch);
    }
    const slots = c * Math.max(1, this.deps.executor.depth ?? 1);
    while (this.inflight.size < slots) {
      const batch = this.queue.nextStaged();
      if (batch === undefined) break;
      this.start(batch);
    }
  }

  /** Expected time until a new request of `rows` rows, arriving while every worker is busy, has its result, ms (0 while nothing is known). */
  private eta(rows: number): number {
    const c = this.deps.executor.concurrency;
    return expectedWait(this.estimator, this.inflight, {
      queuedRows: this.queue.rows,
      rows,
      concurrency: c,
      max: this.max,
      now: this.now(),
    });
  }

  /** Dispatches to free workers, closes the open batch if its size, window or deadline says so, and hands closed batches over. */
  private pump(): void {
    const c = this.deps.executor.concurrency;
    const now = this.now();
    let closeAt = Number.NaN;
    for (;;) {
      this.dispatch(c);
      if (this.queue.stagedCount >= c) break;
      const head = this.queue.peek();
      if (head.rows === 0) break;
      const byWindow = head.firstAt + this.deps.options.windowMs;
      const byDeadline = head.earliest - this.estimator.estimate(head.rows);
      const reason: CloseReason | undefined =
        head.rows >= this.max ? 'size' : now >= byWindow ? 'window' : now >= byDeadline ? 'deadline' : undefined;
      if (reason === undefined) {
        closeAt = Math.min(byWindow, byDeadline);
        break;
      }
      const batch = this.queue.take(reason);
      if (batch === undefined) break;
      this.queue.stage(batch);
    }
    if (closeAt !== this.timerAt) {
      this.clearTimer();
      if (!Number.isNaN(closeAt)) {
        this.timerAt = closeAt;
        this.timer = this.scheduler.setTimeout(
          () => {
            this.timer = undefined;
            this.timerAt = Number.NaN;
            this.pump();
          },
          Math.max(0, Math.ceil(closeAt - now)),
        );
      }
    }
  }

  private start(batch: Batch): void {
    const now = this.now();
    const live: Part[] = [];
    let rows = 0;
    for (const p of batch.parts) {
      if (p.req.settled) continue;
      if (p.req.deadline < now && p.offset === 0) {
        // Late, but it still runs: dropping it now would save only its inference.
        this.counts.expired++;
        this.deps.on?.expired?.({ rows: p.req.rows, lateMs: now - p.req.deadline });
      }
      live.push(p);
      rows += p.rows;
    }
    if (live.length === 0) return;
    const input = batchRequest(live, rows);
    const entry = { startedAt: now, rows };
    this.inflight.add(entry);
    this.counts.batches++;
    this.counts.rows += rows;
    const oldest = Math.min(...live.map((p) => p.req.enqueuedAt));
    this.deps.on?.batchStarted?.({
      rows,
      requests: live.length,
      reason: batch.reason,
      oldestWaitMs: now - oldest,
      running: this.inflight.size,
    });
    const ex = this.deps.executor;
    const exec = ex.inferOwned !== undefined ? ex.inferOwned(input) : ex.infer(input);
    exec.then(
      (result) => this.finished(entry, live, result),
      (err: unknown) => this.failed(entry, live, err),
    );
  }

  private finished(entry: { startedAt: number; rows: number }, live: Part[], result: TensorResult): void {
    const problem = outputProblem(live, result, entry.rows);
    if (problem !== undefined) {
      this.failed(entry, live, new AppError('inference_failed', problem, { transient: false }));
      return;
    }
    const ms = this.now() - entry.startedAt;
    // Learn the executor's own time, not the time seen here: that includes event-loop lag, and shedding
    // cannot cure a busy event loop (it only would, wrongly, refuse work the workers have room for).
    this.estimator.record(entry.rows, result.timing.inferenceMs);
    deliverRows(live, result, entry);
    this.deps.on?.batchFinished?.({ rows: entry.rows, requests: live.length, ms, ok: true });
    this.ended(entry);
  }

  private failed(entry: { startedAt: number; rows: number }, live: Part[], err: unknown): void {
    const e = toAppError(err);
    const requests = new Set(live.map((p) => p.req));
    if (!e.transient && requests.size > 1 && !this.disposed) {
      // Isolate: re-run each request alone, first in line, so only a bad request fails.
      const alone = live
        .filter((p) => !p.req.settled)
        .map((p): Batch => ({ parts: [p], rows: p.rows, reason: 'isolate' }));
      for (const b of alone.reverse()) this.queue.stage(b, true);
    } else {
      for (const p of live) this.settle(p.req, e);
    }
    this.deps.on?.batchFinished?.({
      rows: entry.rows,
      requests: live.length,
      ms: this.now() - entry.startedAt,
      ok: false,
      code: e.code,
    });
    this.ended(entry);
  }

  private ended(entry: { startedAt: number; rows: number }): void {
    this.inflight.delete(entry);
    if (this.disposed) {
      for (const p of this.queue.clear()) this.settle(p.req, retired());
      if (this.inflight.size === 0) this.drained?.();
      return;
    }
    this.pump();
  }

  private settle(req: PendingRequest, err: AppError): void {
    if (req.settled) return;
    req.settled = true;
    req.reject(err);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.scheduler.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.NaN;
  }
}
