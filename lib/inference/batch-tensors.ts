/**
 * How the micro-batcher joins its requests' tensors into one batch and splits the outputs back (rows of
 * different requests never mix), and the deadline inference works to.
 */
import type { RunOptions } from './backend';
import type { Part } from './batch-queue';
import { allocate, concatRows, rowSize, type NamedTensor, type TensorRequest, type TensorResult } from './tensor';

/** The executor's request for a batch: each input's rows of every part, concatenated (a copy the executor may own). */
export function batchRequest(live: readonly Part[], rows: number): TensorRequest {
  const first = (live[0] as Part).req.request;
  if (first.rows === undefined)
    return { inputs: first.inputs.map((t) => ({ ...t, data: t.data.slice() })), outputs: first.outputs };
  const inputs = first.inputs.map((like, i) =>
    concatRows(
      like,
      live.map((p) => ({ tensor: p.req.request.inputs[i] as NamedTensor, offset: p.offset, rows: p.rows })),
    ),
  );
  return { inputs, outputs: first.outputs, rows };
}

/** Why a batch's outputs cannot be split back per request (missing output, or no leading batch axis), if so. */
export function outputProblem(live: readonly Part[], result: TensorResult, rows: number): string | undefined {
  const want = (live[0] as Part).req.request;
  if (result.outputs.length !== want.outputs.length) return `The model returned ${result.outputs.length} output(s).`;
  if (want.rows === undefined) return undefined;
  for (const o of result.outputs)
    if (o.dims[0] !== rows) return `Model output "${o.name}" does not lead with the batch of ${rows} row(s).`;
  return undefined;
}

/**
 * Hands each live part of a finished batch its rows (from the batch started at `entry.startedAt` of `entry.rows`
 * rows); a request whose last part this was resolves with its outputs and its timing.
 */
export function deliverRows(
  live: readonly Part[],
  result: TensorResult,
  entry: { readonly startedAt: number; readonly rows: number },
): void {
  let at = 0;
  for (const p of live) {
    const req = p.req;
    if (!req.settled) {
      placeRows(p, result.outputs, at);
      req.queueMs = Math.max(req.queueMs, entry.startedAt - req.enqueuedAt + result.timing.queueMs);
      req.inferenceMs = Math.max(req.inferenceMs, result.timing.inferenceMs);
      req.batchSize = Math.max(req.batchSize, entry.rows);
      if (--req.remaining === 0) {
        req.settled = true;
        req.resolve({
          outputs: req.outputs,
          timing: { queueMs: req.queueMs, inferenceMs: req.inferenceMs, batchSize: req.batchSize },
        });
      }
    }
    at += p.rows;
  }
}

/** Copies one part's rows of every output (from row `at` of the batch) into its request's outputs. */
export function placeRows(p: Part, outputs: readonly NamedTensor[], at: number): void {
  const req = p.req;
  if (req.request.rows === undefined) {
    req.outputs.push(...outputs);
    return;
  }
  outputs.forEach((o, k) => {
    const per = rowSize(o.dims);
    const mine = (req.outputs[k] ??= {
      name: o.name,
      type: o.type,
      dims: [req.rows, ...o.dims.slice(1)],
      data: allocate(o.type, req.rows * per),
    });
    (mine.data as Uint8Array).set(o.data.subarray(at * per, (at + p.rows) * per) as Uint8Array, p.offset * per);
  });
}

/**
 * The deadline inference works to, ms: the request's own deadline, or, when it reached the batcher
 * later than its arrival at the engine plus its budget allows, `now + budget` (the event loop's
 * lateness is forgiven: the batcher answers only for inference). `Infinity` without a deadline.
 */
export function inferenceDeadline(options: RunOptions, now: number): number {
  const deadline = options.deadline ?? Number.POSITIVE_INFINITY;
  if (!Number.isFinite(deadline) || options.arrivedAt === undefined) return deadline;
  const budget = Math.max(0, deadline - options.arrivedAt);
  return Math.max(deadline, now + budget);
}
