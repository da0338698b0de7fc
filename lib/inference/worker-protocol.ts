/**
 * Messages between the {@link WorkerPool} (main thread) and an inference worker
 * (`inference-worker.ts`). Tensors cross as transferable `ArrayBuffer`s; the model bytes cross once
 * per pool as a `SharedArrayBuffer` in `workerData`.
 */
import type { SessionOptions } from './backend';
import type { TensorType } from './tensor';

/** A tensor crossing threads: its buffer holds exactly the elements (transferred when owned). */
export interface WireTensor {
  readonly name: string;
  readonly type: TensorType;
  readonly dims: readonly number[];
  readonly buffer: ArrayBuffer;
}

/** What a worker is started with (`workerData`). */
export interface WorkerInit {
  /** The ONNX model bytes, shared by every worker of a pool (never copied by postMessage). */
  readonly model: SharedArrayBuffer;
  readonly inputName: string;
  readonly outputName: string;
  /** Features per row. */
  readonly inputWidth: number;
  readonly session: SessionOptions;
}

/** Main thread → worker. */
export type ToWorker =
  /** Run `inputs` (buffers transferred) and answer the `outputs` named. */
  | {
      readonly type: 'run';
      readonly id: number;
      readonly inputs: readonly WireTensor[];
      readonly outputs: readonly string[];
    }
  /**
   * Fault injection (tests, chaos drills): the worker exits abruptly, with code 70, when its next
   * `run` arrives, before answering it, as a native crash would.
   */
  | { readonly type: 'fault'; readonly mode: 'exit-on-next-run' }
  /** Release the session, answer `closed`, and end. */
  | { readonly type: 'close' };

/** Worker → main thread. */
export type FromWorker =
  | {
      readonly type: 'ready';
      readonly executionProviders: readonly string[];
      readonly fallbackReason?: string;
      /** Session creation time in the worker, ms. */
      readonly loadMs: number;
    }
  | { readonly type: 'initFailed'; readonly message: string }
  /** The requested outputs (buffers transferred), in order; `inferenceMs` is measured in the worker. */
  | {
      readonly type: 'result';
      readonly id: number;
      readonly outputs: readonly WireTensor[];
      readonly inferenceMs: number;
    }
  | { readonly type: 'runFailed'; readonly id: number; readonly message: string }
  | { readonly type: 'closed' };

/** Exit code a worker uses for an injected fault. */
export const FAULT_EXIT_CODE = 70;
