import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomModelBytes } from '../../../lib/training/random-model';
import type { AppError } from '../../../lib/errors/errors';
import { FEATURE_COUNT } from '../../../lib/features/featurizer';
import type { InferenceBackend } from '../../../lib/inference/backend';
import type { ModelInput } from '../../../lib/inference/batch-executor';
import { denseForward } from '../../../lib/training/onnx-writer';
import { randomMlpSpec } from '../../../lib/training/random-model';

/** Hidden layers of the contract-suite model (small, so the suite is quick). */
export const CONTRACT_HIDDEN = [16, 8];
const SEED = 11;

/** The contract-suite model as a backend factory receives it. */
export function contractModel(): ModelInput {
  return {
    bytes: randomModelBytes(CONTRACT_HIDDEN, SEED),
    inputName: 'features',
    outputName: 'score',
    inputWidth: FEATURE_COUNT,
  };
}

/** Deterministic pseudo-random rows. */
export function rows(n: number, salt = 1): Float32Array {
  return Float32Array.from({ length: n * FEATURE_COUNT }, (_, i) => Math.sin(i * 12.9898 + salt * 78.233) * 2);
}

function reference(input: Float32Array, n: number): number[] {
  const spec = randomMlpSpec({
    inputSize: FEATURE_COUNT,
    hidden: CONTRACT_HIDDEN,
    seed: SEED,
    inputName: 'features',
    outputName: 'score',
  });
  return [...denseForward(spec, input, n)];
}

/**
 * The contract every {@link InferenceBackend} meets (in-process session, worker pool, micro-batcher):
 * correct scores per row, untouched input, timing, clean rejection of bad input, dispose.
 */
export function backendContract(name: string, make: (model: ModelInput) => Promise<InferenceBackend>): void {
  describe(`${name}: InferenceBackend contract`, () => {
    let backend: InferenceBackend;
    before(async () => {
      backend = await make(contractModel());
    });
    after(async () => {
      await backend.dispose();
    });

    it('describes its model and the providers in use', () => {
      assert.equal(backend.info.inputWidth, FEATURE_COUNT);
      assert.equal(backend.info.inputName, 'features');
      assert.deepEqual([...backend.info.executionProviders], ['cpu']);
    });

    it('scores rows like the reference forward pass, each row independently', async () => {
      const input = rows(5);
      const all = await backend.run(input, 5);
      const ref = reference(input, 5);
      assert.equal(all.scores.length, 5);
      all.scores.forEach((s, i) => assert.ok(Math.abs(s - (ref[i] as number)) < 1e-4, `row ${i}: ${s} vs ${ref[i]}`));
      const third = await backend.run(input.slice(2 * FEATURE_COUNT, 3 * FEATURE_COUNT), 1);
      assert.ok(Math.abs((third.scores[0] as number) - (all.scores[2] as number)) < 1e-6);
    });

    it("leaves the caller's input intact and reports timing", async () => {
      const input = rows(3, 2);
      const copy = input.slice();
      const r = await backend.run(input, 3);
      assert.deepEqual(input, copy);
      assert.ok(r.timing.batchSize >= 3);
      assert.ok(r.timing.inferenceMs >= 0 && r.timing.queueMs >= 0);
    });

    it('serves concurrent callers, each with its own rows', async () => {
      const inputs = [1, 2, 3, 4, 5, 6].map((salt) => rows(1 + (salt % 3), salt));
      const results = await Promise.all(inputs.map((x) => backend.run(x, x.length / FEATURE_COUNT)));
      results.forEach((r, k) => {
        const x = inputs[k] as Float32Array;
        const ref = reference(x, x.length / FEATURE_COUNT);
        r.scores.forEach((s, i) => assert.ok(Math.abs(s - (ref[i] as number)) < 1e-4));
      });
    });

    it('rejects input shorter than rows × width with inference_failed', async () => {
      const err = await backend.run(new Float32Array(FEATURE_COUNT), 2).then(
        () => undefined,
        (e: AppError) => e,
      );
      assert.equal(err?.code, 'inference_failed');
    });
  });
}
