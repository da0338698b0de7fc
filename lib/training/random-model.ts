/**
 * Writes generated models in the models-folder layout (`{dir}/{name}/{version}.onnx` + `.json`) with a
 * manifest that passes verification against the featurizer. Used by the benchmarks (the heavy model)
 * and by tests (small and medium models). The weights are random: the scores mean nothing.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FEATURE_COUNT, FEATURES } from '../features/featurizer';
import type { ModelManifest } from '../models/manifest';
import { sha256Hex } from '../models/model-folder';
import { buildDenseModel, type DenseLayer, type DenseModelSpec } from './onnx-writer';
import { Prng } from './prng';

/** Options of {@link randomMlpSpec} / {@link buildRandomMlp}. */
export interface RandomMlpOptions {
  readonly inputSize: number;
  /** Hidden layer widths (ReLU), e.g. `[2048, 2048, 2048]`; may be empty (then a single sigmoid layer). */
  readonly hidden: readonly number[];
  /** PRNG seed of the weights. */
  readonly seed: number;
  /** Input name; default `features`. */
  readonly inputName?: string;
  /** Output name; default `score`. */
  readonly outputName?: string;
}

/**
 * Spec of an MLP `inputSize → hidden… (ReLU) → 1 (sigmoid)` with seeded random weights: He-uniform
 * (`±√(6/fanIn)`) for hidden layers, Glorot-uniform for the output layer, biases uniform in ±0.01.
 * The weights are meaningless; the model exists to load and benchmark a heavy graph
 * (64 → 3×2048 → 1 is ≈ 8.5 M parameters, ≈ 34 MB).
 */
export function randomMlpSpec(opts: RandomMlpOptions): DenseModelSpec {
  const rng = new Prng(opts.seed);
  const widths = [opts.inputSize, ...opts.hidden, 1];
  const layers: DenseLayer[] = [];
  for (let k = 0; k + 1 < widths.length; k++) {
    const fanIn = widths[k] as number;
    const fanOut = widths[k + 1] as number;
    const last = k + 2 === widths.length;
    const a = last ? Math.sqrt(6 / (fanIn + fanOut)) : Math.sqrt(6 / fanIn);
    const weights = new Float32Array(fanIn * fanOut);
    for (let i = 0; i < weights.length; i++) weights[i] = rng.uniform(-a, a);
    const bias = new Float32Array(fanOut);
    for (let i = 0; i < bias.length; i++) bias[i] = rng.uniform(-0.01, 0.01);
    layers.push({ weights, bias, activation: last ? 'sigmoid' : 'relu' });
  }
  return {
    inputName: opts.inputName ?? 'features',
    outputName: opts.outputName ?? 'score',
    inputSize: opts.inputSize,
    layers,
    producer: 'onnx-scoring-functions/random-mlp',
    docString: `Random MLP ${widths.join('→')} (seed ${opts.seed}); benchmark only, not a real model.`,
  };
}

/** ONNX bytes of {@link randomMlpSpec}: input `[N, inputSize]`, output `[N, 1]` float32. Deterministic per seed. */
export function buildRandomMlp(opts: RandomMlpOptions): Uint8Array {
  return buildDenseModel(randomMlpSpec(opts));
}

/** Options of {@link writeRandomModel}. */
export interface RandomModelOptions {
  /** Hidden layer widths (ReLU); `[]` = a logistic model; `[2048, 2048, 2048]` ≈ 34 MB. */
  readonly hidden: readonly number[];
  /** Weight seed; default 7. */
  readonly seed?: number;
  /** Default `fraud`. */
  readonly name?: string;
  /** Default `1.0.0`. */
  readonly version?: string;
}

/** ONNX bytes of a random MLP over the featurizer's inputs (input `features` [N, 18], output `score` [N, 1]). */
export function randomModelBytes(hidden: readonly number[], seed = 7): Uint8Array {
  return buildRandomMlp({ inputSize: FEATURE_COUNT, hidden, seed, inputName: 'features', outputName: 'score' });
}

/** The manifest of a generated model. */
export function manifestFor(
  bytes: Uint8Array,
  name: string,
  version: string,
  hidden: readonly number[],
): ModelManifest {
  return {
    schemaVersion: 1,
    name,
    version,
    file: `${version}.onnx`,
    sha256: sha256Hex(bytes),
    input: { name: 'features', shape: [-1, FEATURE_COUNT], dtype: 'float32' },
    output: { name: 'score', shape: [-1, 1], dtype: 'float32' },
    features: FEATURES.map((f) => ({ name: f.name, definition: f.definition })),
    thresholds: { review: 0.5, decline: 0.8 },
    training: { generator: 'random-mlp', hidden: hidden.join('x') || 'none' },
  };
}

/**
 * Writes a random model and its manifest under `dir` unless an identical one is there already.
 * @returns the model file's path.
 */
export async function writeRandomModel(dir: string, opts: RandomModelOptions): Promise<string> {
  const name = opts.name ?? 'fraud';
  const version = opts.version ?? '1.0.0';
  const base = path.join(dir, name, version);
  const tag = `${opts.hidden.join('x') || 'none'}`;
  const existing = await fs.readFile(`${base}.json`, 'utf8').catch(() => undefined);
  if (existing !== undefined && (JSON.parse(existing) as ModelManifest).training?.['hidden'] === tag) {
    const ok = await fs.stat(`${base}.onnx`).then(
      () => true,
      () => false,
    );
    if (ok) return `${base}.onnx`;
  }
  const bytes = randomModelBytes(opts.hidden, opts.seed ?? 7);
  await fs.mkdir(path.dirname(base), { recursive: true });
  await fs.writeFile(`${base}.onnx`, bytes);
  await fs.writeFile(`${base}.json`, JSON.stringify(manifestFor(bytes, name, version, opts.hidden), null, 2));
  return `${base}.onnx`;
}
