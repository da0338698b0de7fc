/** One worker thread of the {@link WorkerPool}: started with the model, its messages and its exit turned into calls. */
import { Worker } from 'node:worker_threads';
import { AppError } from '../errors/errors';
import type { BackendInfo } from './backend';
import type { ModelInput } from './batch-executor';
import { withSignature } from './ort-session';
import type { TensorData } from './tensor';
import type { PoolWorker } from './worker-pool-types';
import type { FromWorker, WorkerInit } from './worker-protocol';

/** What the pool does when one of its workers speaks or ends. */
export interface PoolWorkerCalls {
  /** The worker loaded its session. */
  ready(msg: Extract<FromWorker, { type: 'ready' }>): void;
  /** A run ended, with its outputs or its failure. */
  settled(msg: Extract<FromWorker, { type: 'result' | 'runFailed' }>): void;
  /** The worker ended without being retired (its `readyPromise` has rejected if it never loaded). */
  exited(code: number, reason: string): void;
}

/** Starts worker `id` on `script` with the model; `failures`: consecutive failed loads of its line before it. */
export function startPoolWorker(
  id: number,
  script: string,
  init: WorkerInit,
  failures: number,
  calls: PoolWorkerCalls,
): PoolWorker {
  const worker = new Worker(script, { workerData: init });
  let settle!: { resolve: (m: Extract<FromWorker, { type: 'ready' }>) => void; reject: (e: AppError) => void };
  const readyPromise = new Promise<Extract<FromWorker, { type: 'ready' }>>(
    (resolve, reject) => (settle = { resolve, reject }),
  );
  readyPromise.catch(() => undefined);
  const w: PoolWorker = {
    id,
    worker,
    ready: false,
    jobs: [],
    lastError: undefined,
    failures,
    idle: undefined,
    retired: false,
    readyPromise,
  };
  worker.on('message', (msg: FromWorker) => {
    switch (msg.type) {
      case 'ready':
        w.ready = true;
        settle.resolve(msg);
        calls.ready(msg);
        break;
      case 'initFailed':
        w.lastError = msg.message;
        settle.reject(
          new AppError('model_invalid', `ONNX Runtime could not load the model: ${msg.message}`, { transient: false }),
        );
        void worker.terminate();
        break;
      case 'result':
      case 'runFailed':
        calls.settled(msg);
        break;
    }
  });
  worker.on('error', (err) => (w.lastError = err.message.split('\n')[0]));
  worker.on('exit', (code) => {
    if (w.retired) return;
    const reason = w.lastError ?? `exit code ${code}`;
    settle.reject(
      new AppError('model_invalid', `The inference worker stopped while loading the model (${reason}).`, {
        transient: false,
      }),
    );
    calls.exited(code, reason);
  });
  return w;
}

/** The answer to a run a retired pool (or version) can no longer take: retryable. */
export const retiredVersion = (): AppError =>
  new AppError('model_not_ready', 'This model version has been retired.', { retryAfterSec: 1 });

/** A buffer holding exactly `data`'s elements: its own when it spans all of it, else a copy. */
export function ownBuffer(data: TensorData): ArrayBuffer {
  const whole =
    data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer;
  return whole ? (data.buffer as ArrayBuffer) : (data.slice().buffer as ArrayBuffer);
}

/** What a pool whose first worker answered `ready` serves: the model's names and signature, the providers in use. */
export function backendInfo(model: ModelInput, ready: Extract<FromWorker, { type: 'ready' }>): BackendInfo {
  return {
    inputName: model.inputName,
    outputName: model.outputName,
    inputWidth: model.inputWidth,
    executionProviders: ready.executionProviders,
    ...withSignature(model.bytes),
    ...(ready.fallbackReason === undefined ? {} : { fallbackReason: ready.fallbackReason }),
  };
}
