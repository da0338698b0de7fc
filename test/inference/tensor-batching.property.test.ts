/**
 * The micro-batcher's generic tensor path (property): requests of several input shapes and types, with and
 * without a batch axis, share batches only with requests of the same shape, and each gets back exactly its
 * own rows of every output.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { BackendInfo, RunOptions, RunResult } from '../../lib/inference/backend';
import type { BatchExecutor } from '../../lib/inference/batch-executor';
import { MicroBatcher } from '../../lib/inference/micro-batcher';
import { scoreRows } from '../../lib/inference/score-rows';
import type { NamedTensor, TensorRequest, TensorResult } from '../../lib/inference/tensor';
import { FakeTimers, settle } from '../support/clock';

/** Echoes each input `n` as output `n_out`; batches end when the test says. */
class EchoExecutor implements BatchExecutor {
  readonly concurrency = 1;
  readonly info: BackendInfo = { inputName: 'a', outputName: 'a_out', inputWidth: 2, executionProviders: ['cpu'] };
  readonly batches: TensorRequest[] = [];
  readonly waiting: (() => void)[] = [];

  run(input: Float32Array, rows: number, options?: RunOptions): Promise<RunResult> {
    return scoreRows(this, input, rows, options);
  }

  infer(req: TensorRequest): Promise<TensorResult> {
    this.batches.push(req);
    return new Promise((resolve) =>
      this.waiting.push(() =>
        resolve({
          outputs: req.outputs.map((name) => {
            const src = req.inputs.find((i) => `${i.name}_out` === name) as NamedTensor;
            return { ...src, name, data: src.data.slice() };
          }),
          timing: { queueMs: 0, inferenceMs: 1, batchSize: req.rows ?? 1 },
        }),
      ),
    );
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

type Kind = 'pair' | 'wide' | 'alone';

/** A request of `kind` with `rows` rows whose every value encodes (request, position). */
function request(kind: Kind, rows: number, id: number): TensorRequest {
  const ints = (n: number): Int32Array => Int32Array.from({ length: n }, (_, i) => id * 1000 + i);
  if (kind === 'pair')
    return {
      inputs: [
        { name: 'a', type: 'int32', dims: [rows, 2], data: ints(rows * 2) },
        { name: 'b', type: 'float64', dims: [rows, 3], data: Float64Array.from(ints(rows * 3), (x) => x + 0.5) },
      ],
      outputs: ['b_out', 'a_out'],
      rows,
    };
  if (kind === 'wide')
    return { inputs: [{ name: 'a', type: 'int32', dims: [rows, 5], data: ints(rows * 5) }], outputs: ['a_out'], rows };
  return { inputs: [{ name: 'a', type: 'int32', dims: [2, 2], data: ints(4) }], outputs: ['a_out'] };
}

describe('MicroBatcher tensor path (property)', () => {
  it('never mixes requests of different shapes, and returns each request its own rows of every output', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.tuple(fc.constantFrom<Kind>('pair', 'wide', 'alone'), fc.integer({ min: 1, max: 6 })), {
          minLength: 1,
          maxLength: 25,
        }),
        async (maxBatchSize, asks) => {
          const time = new FakeTimers();
          const ex = new EchoExecutor();
          const batcher = new MicroBatcher({
            executor: ex,
            options: { maxBatchSize, windowMs: 1000, queueMax: 10_000 },
            now: time.now,
            scheduler: time,
          });
          const reqs = asks.map(([kind, rows], id) => request(kind, rows, id + 1));
          const results: (TensorResult | undefined)[] = reqs.map(() => undefined);
          reqs.forEach((r, k) => void batcher.infer(r).then((res) => (results[k] = res)));
          for (let guard = 0; guard < 1000 && ex.waiting.length > 0; guard++) {
            (ex.waiting.shift() as () => void)();
            await settle();
          }
          assert.equal(ex.waiting.length, 0, 'the batcher kept dispatching');
          reqs.forEach((r, k) => {
            const res = results[k];
            assert.ok(res !== undefined, `request ${k} settled`);
            assert.deepEqual(
              res.outputs.map((o) => [o.name, o.type, o.dims, Array.from(o.data as Int32Array)]),
              r.outputs.map((name) => {
                const i = r.inputs.find((t) => `${t.name}_out` === name) as NamedTensor;
                return [name, i.type, i.dims, Array.from(i.data as Int32Array)];
              }),
              `request ${k}`,
            );
          });
          for (const b of ex.batches) {
            if (b.rows === undefined) continue;
            assert.ok(b.rows <= maxBatchSize, `a batch of ${b.rows} rows`);
            for (const t of b.inputs) assert.equal(t.dims[0], b.rows);
          }
          await batcher.dispose();
        },
      ),
      { numRuns: 150 },
    );
  });
});
