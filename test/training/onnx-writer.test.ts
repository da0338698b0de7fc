import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as ort from 'onnxruntime-node';
import { readOnnxSignature } from '../../lib/inference/onnx-signature';
import {
  buildPassThroughModel,
  buildDenseModel,
  denseForward,
  type DenseModelSpec,
} from '../../lib/training/onnx-writer';
import { buildRandomMlp, randomMlpSpec } from '../../lib/training/random-model';
import { Prng } from '../../lib/training/prng';

async function run(bytes: Uint8Array, x: Float32Array, batch: number, width: number): Promise<ort.Tensor> {
  const session = await ort.InferenceSession.create(bytes);
  try {
    const out = await session.run({ features: new ort.Tensor('float32', x, [batch, width]) });
    const score = out.score;
    assert.ok(score !== undefined, 'output "score" exists');
    return score;
  } finally {
    await session.release();
  }
}

function randomRows(seed: number, batch: number, width: number): Float32Array {
  const rng = new Prng(seed);
  return Float32Array.from({ length: batch * width }, () => rng.normal(2, 3));
}

/** A small 2-layer network with standardisation, covering Sub/Div/Gemm/Relu/Sigmoid. */
function smallSpec(): DenseModelSpec {
  const base = randomMlpSpec({ inputSize: 6, hidden: [5], seed: 3 });
  return {
    ...base,
    mean: Float32Array.of(1, 2, 3, -1, 0.5, 0),
    std: Float32Array.of(2, 0.5, 3, 1, 4, 1.5),
    producer: 'test',
    docString: 'small test network',
  };
}

describe('buildDenseModel', () => {
  for (const batch of [1, 7]) {
    it(`matches the TypeScript forward pass within 1e-5 (batch ${batch})`, async () => {
      const spec = smallSpec();
      const x = randomRows(batch, batch, spec.inputSize);
      const out = await run(buildDenseModel(spec), x, batch, spec.inputSize);
      assert.deepEqual(out.dims, [batch, 1]);
      const expected = denseForward(spec, x, batch);
      for (let i = 0; i < batch; i++) {
        assert.ok(
          Math.abs((out.data[i] as number) - (expected[i] as number)) <= 1e-5,
          `row ${i}: ${out.data[i]} vs ${expected[i]}`,
        );
      }
    });
  }

  it('supports a linear output layer and no standardisation', async () => {
    const spec: DenseModelSpec = {
      inputName: 'features',
      outputName: 'score',
      inputSize: 2,
      layers: [{ weights: Float32Array.of(1, -2, 0.5, 3), bias: Float32Array.of(0.25, -1), activation: 'none' }],
      producer: 'test',
      docString: '',
    };
    const out = await run(buildDenseModel(spec), Float32Array.of(1, 2), 1, 2);
    assert.deepEqual(out.dims, [1, 2]);
    assert.deepEqual(Array.from(out.data as Float32Array), [1 + 1 + 0.25, -2 + 6 - 1]);
  });

  it('declares a symbolic batch dimension and the given names', async () => {
    const session = await ort.InferenceSession.create(buildDenseModel(smallSpec()));
    assert.deepEqual(session.inputNames, ['features']);
    assert.deepEqual(session.outputNames, ['score']);
    const meta = session.inputMetadata[0];
    assert.ok(meta !== undefined && meta.isTensor);
    assert.deepEqual(meta.shape, ['N', 6]);
    await session.release();
  });

  it('is deterministic', () => {
    assert.deepEqual(buildDenseModel(smallSpec()), buildDenseModel(smallSpec()));
  });

  it('rejects inconsistent sizes', () => {
    const spec = smallSpec();
    assert.throws(() => buildDenseModel({ ...spec, inputSize: 5 }), RangeError);
    assert.throws(() => buildDenseModel({ ...spec, layers: [] }), RangeError);
    const layer = spec.layers[0];
    assert.ok(layer !== undefined);
    assert.throws(() => buildDenseModel({ ...spec, layers: [{ ...layer, bias: new Float32Array(3) }] }), RangeError);
  });
});

describe('buildRandomMlp', () => {
  it('loads and outputs [N, 1] probabilities', async () => {
    const bytes = buildRandomMlp({ inputSize: 8, hidden: [16, 16], seed: 11 });
    for (const batch of [1, 7]) {
      const out = await run(bytes, randomRows(5, batch, 8), batch, 8);
      assert.deepEqual(out.dims, [batch, 1]);
      for (const v of out.data as Float32Array) assert.ok(v > 0 && v < 1);
    }
  });

  it('is deterministic per seed', () => {
    const a = buildRandomMlp({ inputSize: 8, hidden: [16], seed: 1 });
    assert.deepEqual(buildRandomMlp({ inputSize: 8, hidden: [16], seed: 1 }), a);
    assert.notDeepEqual(buildRandomMlp({ inputSize: 8, hidden: [16], seed: 2 }), a);
  });

  it('stores the weights as raw float32 (size ≈ 4 bytes per parameter)', () => {
    const bytes = buildRandomMlp({ inputSize: 64, hidden: [256, 256], seed: 1 });
    const params = 64 * 256 + 256 + 256 * 256 + 256 + 256 + 1;
    assert.ok(bytes.length > params * 4 && bytes.length < params * 4 + 2048, `${bytes.length} bytes`);
  });
});

describe('buildPassThroughModel', () => {
  it('writes typed inputs with symbolic and fixed dims, passed through (Identity) or cast (Cast), as ONNX Runtime runs them', async () => {
    const bytes = buildPassThroughModel({
      tensors: [
        { input: 'i', output: 'o', elemType: 7, dims: ['N', 2] },
        { input: 'c', output: 'd', elemType: 9, castTo: 1, dims: [3] },
      ],
      producer: 'test',
      docString: 'pass-through',
    });
    const sig = readOnnxSignature(bytes);
    assert.deepEqual(
      sig.inputs.map((t) => [t.name, t.elemType, t.dims]),
      [
        ['i', 7, ['N', 2]],
        ['c', 9, [3]],
      ],
    );
    assert.deepEqual(
      sig.outputs.map((t) => [t.name, t.elemType]),
      [
        ['o', 7],
        ['d', 1],
      ],
    );
    const session = await ort.InferenceSession.create(bytes);
    try {
      const out = await session.run({
        i: new ort.Tensor('int64', BigInt64Array.of(-5n, 2n ** 40n), [1, 2]),
        c: new ort.Tensor('bool', Uint8Array.of(1, 0, 1), [3]),
      });
      assert.deepEqual(Array.from(out['o']?.data as BigInt64Array), [-5n, 2n ** 40n]);
      assert.deepEqual([out['d']?.type, Array.from(out['d']?.data as Float32Array)], ['float32', [1, 0, 1]]);
    } finally {
      await session.release();
    }
  });

  it('refuses an empty spec and repeated names', () => {
    const spec = { producer: 'p', docString: 'd' };
    assert.throws(() => buildPassThroughModel({ ...spec, tensors: [] }), RangeError);
    assert.throws(
      () => buildPassThroughModel({ ...spec, tensors: [{ input: 'a', output: 'a', elemType: 1, dims: [1] }] }),
      RangeError,
    );
  });
});
