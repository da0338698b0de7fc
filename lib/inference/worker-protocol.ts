/**
 * Messages between the {@link WorkerPool} (main thread) and an inference worker
 * (`inference-worker.ts`). Tensors cross as transferable `ArrayBuffer`s; the model bytes cross once
 * per pool as a `SharedArrayBuffer` in `workerData`.
 */
import type { SessionOptions } from './backend';

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
  /** Score `rows` rows packed in `input` (transferred). */
  | { readonly type: 'run'; readonly id: number; readonly input: ArrayBuffer; readonly rows: number }
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
  /** `scores` (transferred) holds one float32 per row; `inferenceMs` is measured in the worker. */
  | { readonly type: 'result'; readonly id: number; readonly scores: ArrayBuffer; readonly inferenceMs: number }
  | { readonly type: 'runFailed'; readonly id: number; readonly message: string }
  | { readonly type: 'closed' };

/** Exit code a worker uses for an injected fault. */
export const FAULT_EXIT_CODE = 70;
