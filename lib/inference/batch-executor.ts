/** What the micro-batcher dispatches batches to: a worker pool, or one in-process session. */
import type { InferenceBackend } from './backend';
import type { TensorRequest, TensorResult } from './tensor';

/** A model as the backend factories receive it. */
export interface ModelInput {
  readonly bytes: Uint8Array;
  readonly inputName: string;
  readonly outputName: string;
  /** Features per row. */
  readonly inputWidth: number;
}

/** A backend that can run {@link concurrency} batches at the same time. */
export interface BatchExecutor extends InferenceBackend {
  /** Batches that can run at once (the worker count; 1 for an in-process session). */
  readonly concurrency: number;
  /**
   * Batches each unit of concurrency accepts at a time (default 1). Above 1, closed batches are handed
   * over while the unit is still busy, so it starts the next one without waiting for the event loop.
   */
  readonly depth?: number;
  /**
   * Like `infer`, but may take ownership of the input tensors' buffers (e.g. transfer them to a worker
   * thread): the caller must not touch them afterwards. Optional; `infer` is used when absent.
   */
  inferOwned?(request: TensorRequest): Promise<TensorResult>;
}
