import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ContainerClient } from '@azure/storage-blob';
import { FEATURE_COUNT } from '../../../lib/features/featurizer';
import type { ModelManifest } from '../../../lib/models/manifest';
import { buildDenseModel } from '../../../lib/training/onnx-writer';
import { sha256Hex } from '../../../lib/models/model-folder';
import { BUNDLED_MODELS, bundledManifest, linearModel } from '../../support/models';

/** The bundled fraud 1.0.0 bytes (a logistic model; its manifest carries 32 golden rows). */
export async function bundledBytes(): Promise<Uint8Array> {
  return fs.readFile(path.join(BUNDLED_MODELS, 'fraud', '1.0.0.onnx'));
}

/** A manifest for `bytes` as version `version`, derived from the bundled one; `overrides` win. */
export async function manifestFor(
  version: string,
  bytes: Uint8Array,
  overrides: Partial<ModelManifest> = {},
): Promise<ModelManifest> {
  const base = await bundledManifest();
  return { ...base, version, file: `${version}.onnx`, sha256: sha256Hex(bytes), ...overrides };
}

/** The test models: the same scores as 1.0.0 under a new version, and the faulty ones. */
export const models = {
  /** Same content as the bundled model: a valid new version with zero shift. */
  same: bundledBytes,
  /** Constant score sigmoid(-1.5) ≈ 0.18: valid, but shifted ~0.17 from 1.0.0's golden scores (> 0.1). */
  shifted: (): Uint8Array => linearModel({ bias: -1.5 }),
  /** Input named `x` instead of `features`. */
  wrongSignature: (): Uint8Array =>
    buildDenseModel({
      inputName: 'x',
      outputName: 'score',
      inputSize: FEATURE_COUNT,
      layers: [{ weights: new Float32Array(FEATURE_COUNT), bias: Float32Array.of(0), activation: 'sigmoid' }],
      producer: 'test',
      docString: 'wrong input name',
    }),
  /** Score 0.5 on zeros, but far above 1 on real feature rows (no activation): fails the golden set only. */
  goldenFails: (): Uint8Array => linearModel({ bias: 0.5, weight: 1, activation: 'none' }),
};

/** Uploads `{name}/{version}.json` (if given) and then `{name}/{version}.onnx`, as a data scientist would. */
export async function uploadBlob(
  c: ContainerClient,
  version: string,
  bytes: Uint8Array,
  manifest: ModelManifest | undefined,
  metadata: Record<string, string> = {},
): Promise<void> {
  if (manifest !== undefined) {
    const text = JSON.stringify(manifest);
    await c.getBlockBlobClient(`fraud/${version}.json`).upload(text, Buffer.byteLength(text));
  }
  await c.getBlockBlobClient(`fraud/${version}.onnx`).uploadData(Buffer.from(bytes), { metadata });
}

/** Writes `{dir}/fraud/{version}.json` (if given), then the `.onnx` (and a metadata sidecar), as into the local models folder. */
export async function writeFolderModel(
  dir: string,
  version: string,
  bytes: Uint8Array,
  manifest: ModelManifest | undefined,
  metadata?: Record<string, string>,
): Promise<void> {
  await fs.mkdir(path.join(dir, 'fraud'), { recursive: true });
  if (manifest !== undefined) await fs.writeFile(path.join(dir, 'fraud', `${version}.json`), JSON.stringify(manifest));
  if (metadata !== undefined)
    await fs.writeFile(path.join(dir, 'fraud', `${version}.metadata.json`), JSON.stringify(metadata));
  await fs.writeFile(path.join(dir, 'fraud', `${version}.onnx`), bytes);
}

/** A copy of the bundled models folder under dist/.test-tmp (removed by `remove`). */
export async function copyBundled(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const root = path.join(__dirname, '..', '..', '..', '.test-tmp');
  await fs.mkdir(root, { recursive: true });
  const dir = await fs.mkdtemp(path.join(root, 'rollout-'));
  await fs.cp(BUNDLED_MODELS, dir, { recursive: true });
  return { dir, remove: () => fs.rm(dir, { recursive: true, force: true }) };
}
