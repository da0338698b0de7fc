/**
 * The generic tensor path through each real backend (in-process session, worker pool across threads, and the
 * micro-batcher over a worker pool): every supported element type comes back exactly as sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InferenceBackend } from '../../lib/inference/backend';
import type { ModelInput } from '../../lib/inference/batch-executor';
import { MicroBatcher } from '../../lib/inference/micro-batcher';
import { InlineOrtBackend } from '../../lib/inference/ort-session';
import type { NamedTensor, TensorRequest } from '../../lib/inference/tensor';
import { WorkerPool } from '../../lib/inference/worker-pool';
import { typesModel } from '../oip/support';

const session = { executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' as const };
const model = (): ModelInput => ({ bytes: typesModel(), inputName: 'in_FP32', outputName: 'out_FP32', inputWidth: 3 });

/** Two rows of every type (the `types` model's `in_D` → `out_D`, and `cast_in` INT32 → `cast_out` FP64). */
function request(): TensorRequest {
  const t = (name: string, type: NamedTensor['type'], data: NamedTensor['data']): NamedTensor => ({
    name,
    type,
    dims: [2, 3],
    data,
  });
  const inputs: NamedTensor[] = [
    t('in_BOOL', 'bool', Uint8Array.of(1, 0, 1, 0, 0, 1)),
    t('in_UINT8', 'uint8', Uint8Array.of(0, 1, 255, 7, 128, 254)),
    t('in_UINT16', 'uint16', Uint16Array.of(0, 1, 65535, 300, 32768, 9)),
    t('in_UINT32', 'uint32', Uint32Array.of(0, 1, 4294967295, 70000, 2147483648, 5)),
    t('in_UINT64', 'uint64', BigUint64Array.of(0n, 1n, 2n ** 64n - 1n, 2n ** 40n, 3n, 4n)),
    t('in_INT8', 'int8', Int8Array.of(-128, 127, 0, -1, 1, 64)),
    t('in_INT16', 'int16', Int16Array.of(-32768, 32767, 0, -1, 1, 1000)),
    t('in_INT32', 'int32', Int32Array.of(-2147483648, 2147483647, 0, -1, 1, 100000)),
    t('in_INT64', 'int64', BigInt64Array.of(-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n, 2n ** 40n, 5n)),
    t('in_FP32', 'float32', Float32Array.of(0, -1.5, 0.25, 3.4e38, -1e-7, 65504)),
    t('in_FP64', 'float64', Float64Array.of(0, -1.5, 0.1, 1.7e308, -5e-324, Math.PI)),
    { name: 'cast_in', type: 'int32', dims: [2, 2], data: Int32Array.of(-3, 0, 7, 9) },
  ];
  return { inputs, outputs: inputs.map((i) => i.name.replace(/^in_/, 'out_').replace('cast_in', 'cast_out')), rows: 2 };
}

function check(backend: () => InferenceBackend): void {
  it('returns every element type exactly as sent (and the cast)', async () => {
    const req = request();
    const sent = req.inputs.map((t) => Array.from(t.data as ArrayLike<number | bigint>));
    const res = await backend().infer(req);
    res.outputs.forEach((o, k) => {
      const i = req.inputs[k] as NamedTensor;
      assert.equal(o.name, req.outputs[k]);
      if (o.name === 'cast_out') {
        assert.deepEqual([o.type, o.dims, Array.from(o.data as Float64Array)], ['float64', [2, 2], [-3, 0, 7, 9]]);
        return;
      }
      assert.deepEqual(
        [o.type, o.dims, Array.from(o.data as ArrayLike<number | bigint>)],
        [i.type, i.dims, sent[k]],
        o.name,
      );
    });
    req.inputs.forEach((t, k) =>
      assert.deepEqual(Array.from(t.data as ArrayLike<number | bigint>), sent[k], 'input intact'),
    );
  });
}

describe('tensor path: in-process session', () => {
  let b: InlineOrtBackend;
  before(async () => (b = await InlineOrtBackend.create(model(), session)));
  after(() => b.dispose());
  check(() => b);
});

describe('tensor path: worker pool', () => {
  let b: WorkerPool;
  before(async () => (b = await WorkerPool.create(model(), { size: 1, session })));
  after(() => b.dispose());
  check(() => b);
});

describe('tensor path: micro-batcher over a worker pool', () => {
  let b: MicroBatcher;
  before(async () => {
    const executor = await WorkerPool.create(model(), { size: 1, session });
    b = new MicroBatcher({ executor, options: { maxBatchSize: 8, windowMs: 1, queueMax: 64 } });
  });
  after(() => b.dispose());
  check(() => b);
});
