/** Contracts between the session manager and whatever runs a model (in-process session, worker pool, batcher). */

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

/** One loaded model version that can score rows. */
export interface InferenceBackend {
  readonly info: BackendInfo;
  /**
   * Scores `rows` rows packed in `input` (row-major, `rows × info.inputWidth`).
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
