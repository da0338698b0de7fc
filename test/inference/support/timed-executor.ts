import type { BackendInfo, RunOptions, RunResult } from '../../../lib/inference/backend';
import type { BatchExecutor } from '../../../lib/inference/batch-executor';
import { scoreRows } from '../../../lib/inference/score-rows';
import type { TensorRequest, TensorResult } from '../../../lib/inference/tensor';
import type { FakeTimers } from '../../support/clock';
import { WIDTH } from './fake-executor';

/**
 * A {@link BatchExecutor} with known run times: a batch of `n` rows takes `runMs(n)` ms of the
 * injected clock, on one of `concurrency` units. Scores are each row's first value / 1000.
 */
export class TimedExecutor implements BatchExecutor {
  readonly info: BackendInfo = { inputName: 'x', outputName: 'y', inputWidth: WIDTH, executionProviders: ['cpu'] };
  /** Batches running now. */
  running = 0;
  /** Most batches that ran at once. */
  maxRunning = 0;

  constructor(
    private readonly time: FakeTimers,
    readonly concurrency: number,
    readonly runMs: (rows: number) => number,
  ) {}

  run(input: Float32Array, rows: number, options?: RunOptions): Promise<RunResult> {
    return scoreRows(this, input, rows, options);
  }

  /** The generic path: the single float32 input's rows run for `runMs(rows)`; output `y` holds one score per row. */
  infer(request: TensorRequest): Promise<TensorResult> {
    const rows = request.rows ?? 1;
    const copy = (request.inputs[0]?.data as Float32Array).slice(0, rows * WIDTH);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const ms = this.runMs(rows);
    return new Promise((resolve) => {
      this.time.setTimeout(() => {
        this.running--;
        const scores = Float32Array.from({ length: rows }, (_, i) => (copy[i * WIDTH] ?? 0) / 1000);
        resolve({
          outputs: [{ name: this.info.outputName, type: 'float32', dims: [rows], data: scores }],
          timing: { queueMs: 0, inferenceMs: ms, batchSize: rows },
        });
      }, ms);
    });
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}
