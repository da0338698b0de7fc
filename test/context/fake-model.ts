import { AppError } from '../../lib/errors/errors';
import type { BackendFactory, InferenceBackend } from '../../lib/inference/backend';
import { FEATURE_COUNT, FEATURE_NAMES, FEATURES } from '../../lib/features/featurizer';
import type { ModelManifest } from '../../lib/models/manifest';
import type { ModelSource } from '../../lib/models/model-folder';

/**
 * A stand-in for the ONNX model (the context tests exercise the context path, not inference): a fixed
 * logistic model over the feature row, behind the real `InferenceBackend` / `ModelSource` contracts.
 */
const manifest: ModelManifest = {
  schemaVersion: 1,
  name: 'fraud',
  version: '1.0.0',
  file: '1.0.0.onnx',
  sha256: '0'.repeat(64),
  input: { name: 'features', shape: [-1, FEATURE_COUNT], dtype: 'float32' },
  output: { name: 'score', shape: [-1, 1], dtype: 'float32' },
  features: FEATURES.map((f) => ({ name: f.name, definition: f.definition })),
  thresholds: { review: 0.5, decline: 0.9 },
};

/** A model source serving the fixed manifest. */
export const fakeModelSource: ModelSource = { load: () => Promise.resolve({ manifest, bytes: new Uint8Array(0) }) };

/** A backend factory whose backend scores `sigmoid(0.3 · Σ features − 3)` on the calling thread. */
export const fakeBackendFactory: BackendFactory = {
  load: (m): Promise<InferenceBackend> =>
    Promise.resolve({
      info: {
        inputName: m.inputName,
        outputName: m.outputName,
        inputWidth: FEATURE_NAMES.length,
        executionProviders: ['cpu'],
      },
      run: (input: Float32Array, rows: number) => {
        const scores = new Float32Array(rows);
        for (let r = 0; r < rows; r++) {
          let s = 0;
          for (let i = 0; i < FEATURE_COUNT; i++) s += input[r * FEATURE_COUNT + i] ?? 0;
          scores[r] = 1 / (1 + Math.exp(-(0.3 * s - 3)));
        }
        return Promise.resolve({ scores, timing: { queueMs: 0, inferenceMs: 0, batchSize: rows } });
      },
      infer: () => Promise.reject(new AppError('inference_failed', 'the fake model scores rows only')),
      dispose: () => Promise.resolve(),
    }),
};
