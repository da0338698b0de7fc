/** Contracts between the session manager and whatever runs a model (in-process session, worker pool, batcher). */
import type { OnnxSignature } from './onnx-signature';
import type { TensorRequest, TensorResult } from './tensor';

/** Options for creating ONNX Runtime sessions. */
export interface SessionOptions {
  /** Requested execution providers in preference order, e.g. `['cuda', 'cpu']`. */
  readonly executionProviders: readonly string[];
  /** Intra-op threads per session; 0 = ONNX Runtime's default. */
  readonly intraOpThreads: number;
  readonly graphOptimization: 'disabled' | 'basic' | 'extended' | 'all';
}

/** What a loaded model reports about itself. */
export interface BackendInfo {
  /** Input tensor name. */
  readonly inputName: string;
  /** Output tensor name. */
  readonly outputName: string;
  /** Row width (features per row). */
  readonly inputWidth: number;
  /** Execution providers actually in use (after any fallback). */
  readonly executionProviders: readonly string[];
  /** Why the requested providers were not all used, if they were not. */
  readonly fallbackReason?: string;
  /** Every graph input and output (names, element types, dims), read from the model file; absent if unreadable. */
  readonly signature?: OnnxSignature;
}

/** Per-call options for {@link InferenceBackend.run}. */
export interface RunOptions {
  /** Absolute deadline (ms, on the backend's clock). */
  readonly deadline?: number;
  /**
   * When the request arrived at the engine (ms, same clock). With it, `deadline − arrivedAt` is the
   * request's budget, and a batcher reached late (a busy event loop) still gives inference that
   * whole budget; without it, the budget ends at `deadline`.
   */
  readonly arrivedAt?: number;
}

/** Timing of one call, as measured by the backend. */
export interface RunTiming {
  /** Time spent queued before inference started, ms. */
  readonly queueMs: number;
  /** Time the inference itself took, ms. */
  readonly inferenceMs: number;
  /** Rows in the batch this call ran in. */
  readonly batchSize: number;
}

/** Result of one call: one score per row, and timing. */
export interface RunResult {
  readonly scores: Float32Array;
  readonly timing: RunTiming;
}

/** One loaded model version: the generic tensor path ({@link infer}) and the scorer's shortcut ({@link run}). */
export interface InferenceBackend {
  readonly info: BackendInfo;
  /**
   * Runs named, typed input tensors and returns the requested outputs (the generic path).
   * @throws AppError `inference_failed` (bad request or failed run), `overloaded`, `deadline_exceeded`, `model_not_ready`.
   */
  infer(request: TensorRequest, options?: RunOptions): Promise<TensorResult>;
  /**
   * Scores `rows` rows packed in `input` (row-major, `rows × info.inputWidth`): one client of {@link infer}
   * (input `info.inputName` `[rows, inputWidth]` float32, output `info.outputName`, one float32 per row).
   * @returns one score per row.
   */
  run(input: Float32Array, rows: number, options?: RunOptions): Promise<RunResult>;
  /** Releases native memory. No call may be in flight (the session manager's leases ensure it). */
  dispose(): Promise<void>;
}

/** Loads a model file into a backend. */
export interface BackendFactory {
  load(model: {
    readonly bytes: Uint8Array;
    readonly inputName: string;
    readonly outputName: string;
    readonly inputWidth: number;
  }): Promise<InferenceBackend>;
}
