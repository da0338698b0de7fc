import * as path from 'node:path';
import { AppError } from '../errors/errors';
import type { BackendInfo, RunOptions, RunResult } from './backend';
import type { BatchExecutor, ModelInput } from './batch-executor';
import { backendInfo, ownBuffer, retiredVersion, startPoolWorker } from './pool-worker';
import { scoreRows } from './score-rows';
import { checkRequest, view, type TensorRequest, type TensorResult } from './tensor';
import { MAX_BACKOFF_MS, type Job, type PoolWorker, type WorkerPoolOptions } from './worker-pool-types';
import type { FromWorker, WireTensor, WorkerInit } from './worker-protocol';

export { type WorkerPoolEvents, type WorkerPoolOptions } from './worker-pool-types';

/**
 * A fixed-size pool of worker threads, each with its own ONNX Runtime session, running one batch per
 * worker at a time (the next {@link depth} − 1 wait inside the worker). Inputs and outputs cross threads
 * as transferred buffers; the model bytes are shared.
 * A worker that exits or hangs is replaced; its in-flight run rejects with `inference_failed`
 * (transient), never hangs. Runs beyond the idle workers wait in a FIFO (the micro-batcher in front
 * keeps it short by never dispatching more than {@link concurrency} batches).
 */
export class WorkerPool implements BatchExecutor {
  private readonly workers = new Set<PoolWorker>();
  private readonly queue: Job[] = [];
  private readonly respawnTimers = new Set<NodeJS.Timeout>();
  private readonly init: WorkerInit;
  private nextJobId = 1;
  private nextWorkerId = 1;
  private disposed = false;
  private started = false;
  private restartCount = 0;
  info!: BackendInfo;

  private constructor(
    model: ModelInput,
    private readonly options: WorkerPoolOptions,
  ) {
    const shared = new SharedArrayBuffer(model.bytes.byteLength);
    new Uint8Array(shared).set(model.bytes);
    this.init = {
      model: shared,
      inputName: model.inputName,
      outputName: model.outputName,
      inputWidth: model.inputWidth,
      session: options.session,
    };
  }

  /**
   * Starts `options.size` workers and waits until each has loaded the model.
   * @throws AppError `model_invalid` if a worker cannot load it (all workers are stopped).
   */
  static async create(model: ModelInput, options: WorkerPoolOptions): Promise<WorkerPool> {
    if (!Number.isInteger(options.size) || options.size < 1)
      throw new AppError('config_invalid', 'A worker pool needs at least one worker.');
    const pool = new WorkerPool(model, options);
    const results = await Promise.allSettled(
      Array.from({ length: options.size }, () => pool.spawn(false, 0).readyPromise),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    const first = results.find((r) => r.status === 'fulfilled');
    if (failed !== undefined || first === undefined) {
      await pool.dispose();
      const reason: unknown = failed?.reason;
      throw reason instanceof AppError
        ? reason
        : new AppError('model_invalid', 'The inference workers could not load the model.', {
            cause: reason,
            transient: false,
          });
    }
    pool.info = backendInfo(model, first.value);
    pool.started = true;
    return pool;
  }

  /** Batches that can run at once: the configured worker count. */
  get concurrency(): number {
    return this.options.size;
  }

  /** Batches each worker accepts at a time (one running, the rest queued in the worker). */
  get depth(): number {
    return Math.max(1, this.options.depth ?? 2);
  }

  /** Counters: live and busy workers, runs handed to workers, runs queued in the pool, workers replaced so far. */
  get stats(): { live: number; busy: number; inWorkers: number; queued: number; restarts: number } {
    let busy = 0;
    let inWorkers = 0;
    for (const w of this.workers) {
      if (w.jobs.length > 0) busy++;
      inWorkers += w.jobs.length;
    }
    return { live: this.workers.size, busy, inWorkers, queued: this.queue.length, restarts: this.restartCount };
  }

  /** Scores `rows` rows (the generic path; the caller keeps `input`). */
  run(input: Float32Array, rows: number, options?: RunOptions): Promise<RunResult> {
    return scoreRows(this, input, rows, options);
  }

  /** Runs a request; copies its inputs (the caller keeps them). */
  infer(request: TensorRequest): Promise<TensorResult> {
    return this.inferOwned({ ...request, inputs: request.inputs.map((t) => ({ ...t, data: t.data.slice() })) });
  }

  /** Runs a request, transferring each input's buffer to the worker when the tensor owns all of it (the caller must not reuse them). */
  inferOwned(request: TensorRequest): Promise<TensorResult> {
    if (this.disposed) return Promise.reject(retiredVersion());
    try {
      checkRequest(request);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const inputs: WireTensor[] = request.inputs.map((t) => ({
      name: t.name,
      type: t.type,
      dims: t.dims,
      buffer: ownBuffer(t.data),
    }));
    return new Promise<TensorResult>((resolve, reject) => {
      const id = this.nextJobId++;
      const timer = setTimeout(() => this.timeout(id), this.options.runTimeoutMs ?? 30_000);
      timer.unref();
      this.queue.push({
        id,
        inputs,
        outputs: request.outputs,
        rows: request.rows ?? 1,
        enqueuedAt: performance.now(),
        resolve,
        reject,
        timer,
      });
      this.drain();
    });
  }

  /**
   * Fault injection for tests and chaos drills: the worker `index` (in start order among live
   * workers) exits abruptly on its next run. Returns false if there is no such worker.
   */
  injectFault(index = 0): boolean {
    const w = [...this.workers][index];
    if (w === undefined) return false;
    w.worker.postMessage({ type: 'fault', mode: 'exit-on-next-run' });
    return true;
  }

  /** Rejects queued runs, waits for running ones, then closes every worker (releasing its session). */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const t of this.respawnTimers) clearTimeout(t);
    this.respawnTimers.clear();
    for (const job of this.queue.splice(0)) this.fail(job, retiredVersion());
    await Promise.all([...this.workers].map((w) => this.close(w)));
  }

  private spawn(replacement: boolean, failures: number): PoolWorker {
    const script = this.options.workerScript ?? path.join(__dirname, 'inference-worker.js');
    const w: PoolWorker = startPoolWorker(this.nextWorkerId++, script, this.init, failures, {
      ready: (msg) => {
        this.options.on?.workerReady?.({ workerId: w.id, loadMs: msg.loadMs, replacement });
        this.drain();
      },
      settled: (msg) => this.finish(w, msg),
      exited: (code, reason) => this.exited(w, code, reason),
    });
    this.workers.add(w);
    return w;
  }

  /** A worker ended unasked: its runs are failed or requeued, and it is replaced (with a backoff if it never loaded). */
  private exited(w: PoolWorker, code: number, reason: string): void {
    this.workers.delete(w);
    const failed = this.evict(w, 'The inference worker stopped unexpectedly; the request was not scored.');
    if (this.disposed || !this.started) return;
    if (w.ready) {
      this.options.on?.workerExit?.({ workerId: w.id, exitCode: code, failedRuns: failed, reason });
      this.restartCount++;
      this.respawn(0);
    } else {
      const retryInMs = Math.min(MAX_BACKOFF_MS, 100 * 2 ** w.failures);
      this.options.on?.respawnFailed?.({ workerId: w.id, reason, retryInMs });
      this.respawn(w.failures + 1, retryInMs);
    }
  }

  private respawn(failures: number, delayMs = 0): void {
    if (delayMs <= 0) {
      this.spawn(true, failures);
      return;
    }
    const t = setTimeout(() => {
      this.respawnTimers.delete(t);
      if (!this.disposed) this.spawn(true, failures);
    }, delayMs);
    t.unref();
    this.respawnTimers.add(t);
  }

  /** Hands queued runs to ready workers: to an idle one first, else to the least loaded below `depth`. */
  private drain(): void {
    while (this.queue.length > 0) {
      let best: PoolWorker | undefined;
      for (const w of this.workers)
        if (w.ready && w.jobs.length < this.depth && (best === undefined || w.jobs.length < best.jobs.length)) best = w;
      if (best === undefined) return;
      const job = this.queue.shift() as Job;
      // The running batch's buffer is transferred; one waiting behind it is copied, so it can be
      // handed to another worker if this one dies before starting it.
      const transfer = best.jobs.length === 0 ? job.inputs.map((t) => t.buffer) : [];
      best.jobs.push(job);
      best.worker.postMessage({ type: 'run', id: job.id, inputs: job.inputs, outputs: job.outputs }, transfer);
    }
  }

  private finish(w: PoolWorker, msg: Extract<FromWorker, { type: 'result' | 'runFailed' }>): void {
    const job = w.jobs[0];
    if (job === undefined || job.id !== msg.id) return; // timed out already
    w.jobs.shift();
    if (w.jobs.length === 0) w.idle?.();
    clearTimeout(job.timer);
    if (msg.type === 'result') {
      // queueMs: everything but the inference itself (waiting in the pool and in the worker, transfers)
      const queueMs = Math.max(0, performance.now() - job.enqueuedAt - msg.inferenceMs);
      job.resolve({
        outputs: msg.outputs.map((t) => ({ name: t.name, type: t.type, dims: t.dims, data: view(t.type, t.buffer) })),
        timing: { queueMs, inferenceMs: msg.inferenceMs, batchSize: job.rows },
      });
    } else {
      const m = msg.message.startsWith('Inference failed: ') ? msg.message : `Inference failed: ${msg.message}`;
      job.reject(new AppError('inference_failed', m, { transient: false }));
    }
    this.drain();
  }

  /**
   * Takes every run off a dead worker: the one it was running fails (transient `inference_failed`);
   * those waiting behind it never started and go back to the head of the queue. Returns runs failed.
   */
  private evict(w: PoolWorker, message: string): number {
    const [running, ...waiting] = w.jobs.splice(0);
    w.idle?.();
    if (running !== undefined) this.fail(running, new AppError('inference_failed', message, { transient: true }));
    if (this.disposed) {
      for (const job of waiting) this.fail(job, retiredVersion());
    } else {
      this.queue.unshift(...waiting);
      this.drain();
    }
    return running === undefined ? 0 : 1;
  }

  private fail(job: Job, err: AppError): void {
    clearTimeout(job.timer);
    job.reject(err);
  }

  private timeout(id: number): void {
    const i = this.queue.findIndex((j) => j.id === id);
    if (i >= 0) {
      const noWorker = 'No inference worker became available in time.';
      this.fail(this.queue.splice(i, 1)[0] as Job, new AppError('inference_failed', noWorker, { transient: true }));
      return;
    }
    for (const w of this.workers) {
      if (!w.jobs.some((j) => j.id === id)) continue;
      // A hung native call may never return: retire the worker now rather than wait for its exit.
      w.retired = true;
      this.workers.delete(w);
      const failed = this.evict(w, 'Inference timed out; the worker was replaced.');
      void w.worker.terminate();
      if (this.disposed) return;
      this.options.on?.workerExit?.({
        workerId: w.id,
        exitCode: -1,
        failedRuns: failed,
        reason: 'run timed out; worker presumed hung',
      });
      this.restartCount++;
      this.respawn(0);
      return;
    }
  }

  private async close(w: PoolWorker): Promise<void> {
    const exited = new Promise<void>((resolve) => w.worker.once('exit', () => resolve()));
    if (w.jobs.length > 0) await new Promise<void>((resolve) => (w.idle = resolve));
    w.worker.postMessage({ type: 'close' });
    const force = setTimeout(() => void w.worker.terminate(), 5000);
    force.unref();
    await exited;
    clearTimeout(force);
  }
}
