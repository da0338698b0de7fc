import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FEATURE_COUNT } from '../../lib/features/featurizer';
import type { ModelManifest } from '../../lib/models/manifest';
import { parseManifest, sha256Hex } from '../../lib/models/model-folder';
import { buildDenseModel, type Activation } from '../../lib/training/onnx-writer';

/** The repo's bundled models folder (compiled tests run from dist/test/support). */
export const BUNDLED_MODELS = path.resolve(__dirname, '../../../models');

/** The bundled fraud model's manifest. */
export async function bundledManifest(): Promise<ModelManifest> {
  const dir = path.join(BUNDLED_MODELS, 'fraud');
  const versions = (await fs.readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  return parseManifest(await fs.readFile(path.join(dir, versions.at(-1) as string), 'utf8'));
}

/** A one-layer model over the fraud features: `act(x · w + bias)`, all weights `w`. */
export function linearModel(opts: { bias: number; weight?: number; activation?: Activation }): Uint8Array {
  return buildDenseModel({
    inputName: 'features',
    outputName: 'score',
    inputSize: FEATURE_COUNT,
    layers: [
      {
        weights: new Float32Array(FEATURE_COUNT).fill(opts.weight ?? 0),
        bias: Float32Array.of(opts.bias),
        activation: opts.activation ?? 'sigmoid',
      },
    ],
    producer: 'test',
    docString: 'test model',
  });
}

/** Creates a fresh temporary models folder. */
export async function tempModelsDir(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'models-'));
}

/**
 * Writes `{dir}/fraud/{version}.onnx` and a manifest derived from the bundled one, with the right sha256
 * unless overridden. Returns the manifest written.
 */
export async function writeModel(
  dir: string,
  version: string,
  bytes: Uint8Array,
  overrides: Partial<ModelManifest> = {},
): Promise<ModelManifest> {
  const base = await bundledManifest();
  const manifest: ModelManifest = {
    ...base,
    version,
    file: `${version}.onnx`,
    sha256: sha256Hex(bytes),
    golden: undefined,
    ...overrides,
  };
  await fs.mkdir(path.join(dir, manifest.name), { recursive: true });
  await fs.writeFile(path.join(dir, manifest.name, `${version}.onnx`), bytes);
  await fs.writeFile(path.join(dir, manifest.name, `${version}.json`), JSON.stringify(manifest));
  return manifest;
}
