/** The fraud scorer's call shape on top of the generic tensor path: float32 rows in, one score per row out. */
import { AppError } from '../errors/errors';
import type { BackendInfo, RunOptions, RunResult } from './backend';
import type { TensorRequest, TensorResult } from './tensor';

/** The request of {@link scoreRows}: input `info.inputName` as `[rows, inputWidth]` float32, output `info.outputName`. */
export function scoreRequest(info: BackendInfo, input: Float32Array, rows: number): TensorRequest {
  const n = rows * info.inputWidth;
  if (!Number.isInteger(rows) || rows < 0 || input.length < n)
    throw new AppError('inference_failed', `Expected ${n} input values for ${rows} row(s).`, { transient: false });
  const data = input.length === n ? input : input.subarray(0, n);
  return {
    inputs: [{ name: info.inputName, type: 'float32', dims: [rows, info.inputWidth], data }],
    outputs: [info.outputName],
    rows,
  };
}

/** The scores of a {@link scoreRequest}'s result. @throws AppError `inference_failed` unless one float32 per row. */
export function scoresOf(result: TensorResult, rows: number, outputName: string): RunResult {
  const out = result.outputs.find((o) => o.name === outputName);
  if (out === undefined || !(out.data instanceof Float32Array) || out.data.length !== rows)
    throw new AppError('inference_failed', `Model output "${outputName}" has an unexpected type or shape.`, {
      transient: false,
    });
  return { scores: out.data, timing: result.timing };
}

/**
 * Scores `rows` rows through a backend's generic path ({@link InferenceBackend.infer}).
 * @throws AppError `inference_failed` for input shorter than `rows × inputWidth`, or an output not one float32 per row.
 */
export async function scoreRows(
  backend: { readonly info: BackendInfo; infer(r: TensorRequest, o?: RunOptions): Promise<TensorResult> },
  input: Float32Array,
  rows: number,
  options?: RunOptions,
): Promise<RunResult> {
  const req = scoreRequest(backend.info, input, rows);
  if (rows === 0) return { scores: new Float32Array(0), timing: { queueMs: 0, inferenceMs: 0, batchSize: 0 } };
  return scoresOf(await backend.infer(req, options), rows, backend.info.outputName);
}
