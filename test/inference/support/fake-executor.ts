import { AppError } from '../../../lib/errors/errors';
import type { BackendInfo, RunOptions, RunResult } from '../../../lib/inference/backend';
import type { BatchExecutor } from '../../../lib/inference/batch-executor';
import { scoreRows } from '../../../lib/inference/score-rows';
import type { TensorRequest, TensorResult } from '../../../lib/inference/tensor';

/** One batch the fake executor received; the test decides when and how it ends. */
export interface FakeCall {
  readonly input: Float32Array;
  readonly rows: number;
  /** Ends the batch with each row's score = its first value / 1000 (or the given scores). */
  succeed(scores?: Float32Array): void;
  fail(err: unknown): void;
}

/** Row width used by the fake executor's model. */
export const WIDTH = 3;

/** A row whose score under {@link FakeExecutor} is `id / 1000`. */
export function row(id: number): Float32Array {
  return Float32Array.of(id, -id, 0.5);
}

/** A {@link BatchExecutor} whose batches complete only when the test says so. */
export class FakeExecutor implements BatchExecutor {
  readonly calls: FakeCall[] = [];
  /** Batches per unit of concurrency (a test may raise it to exercise pipelining). */
  depth = 1;
  /** Most batches that were open (dispatched, not ended) at once. */
  maxOpen = 0;
  disposed = false;
  readonly info: BackendInfo = { inputName: 'x', outputName: 'y', inputWidth: WIDTH, executionProviders: ['cpu'] };

  constructor(
    readonly concurrency = 1,
    /** Fails any batch holding a row whose first value is this id (a "poison" request). */
    private readonly poisonId?: number,
    /** Clock for the reported `inferenceMs` (time from dispatch to `succeed`); default: always 1 ms. */
    private readonly now?: () => number,
  ) {}

  /** Batches not yet ended. */
  get open(): FakeCall[] {
    return this.calls.filter((c) => !(c as { done?: boolean }).done);
  }

  run(input: Float32Array, rows: number, options?: RunOptions): Promise<RunResult> {
    return scoreRows(this, input, rows, options);
  }

  /** The generic path: its single float32 input's rows become a {@link FakeCall}; output `y` holds one score per row. */
  infer(request: TensorRequest): Promise<TensorResult> {
    const startedAt = this.now?.() ?? 0;
    const rows = request.rows ?? 1;
    const input = request.inputs[0]?.data as Float32Array;
    return new Promise<TensorResult>((resolve, reject) => {
      const copy = input.slice();
      const call: FakeCall & { done?: boolean } = {
        input: copy,
        rows,
        succeed: (scores) => {
          call.done = true;
          const out = scores ?? Float32Array.from({ length: rows }, (_, i) => (copy[i * WIDTH] ?? 0) / 1000);
          const inferenceMs = this.now === undefined ? 1 : this.now() - startedAt;
          resolve({
            outputs: [{ name: this.info.outputName, type: 'float32', dims: [out.length], data: out }],
            timing: { queueMs: 0, inferenceMs, batchSize: rows },
          });
        },
        fail: (err) => {
          call.done = true;
          reject(err);
        },
      };
      this.calls.push(call);
      this.maxOpen = Math.max(this.maxOpen, this.open.length);
      if (
        this.poisonId !== undefined &&
        Array.from({ length: rows }, (_, i) => copy[i * WIDTH]).includes(this.poisonId)
      ) {
        call.fail(new AppError('inference_failed', 'Inference failed: bad row', { transient: false }));
      }
    });
  }

  /** First values (ids) of each row of a call. */
  static ids(call: FakeCall): number[] {
    return Array.from({ length: call.rows }, (_, i) => call.input[i * WIDTH] as number);
  }

  dispose(): Promise<void> {
    this.disposed = true;
    return Promise.resolve();
  }
}
