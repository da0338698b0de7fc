import { createHash } from 'node:crypto';
import * as ort from 'onnxruntime-node';
import { FEATURE_COUNT, FEATURES } from '../features/featurizer';
import { manifestSchema, type ModelManifest } from '../models/manifest';
import { driftReference } from '../learning/drift-bins';
import { buildDenseModel, denseForward, type DenseModelSpec } from './onnx-writer';
import { featurizeSamples, generatePayments } from './synthetic-payments';
import {
  chooseThresholds,
  type EpochProgress,
  type LogisticModel,
  metricsAt,
  predictLogistic,
  rocAuc,
  trainLogistic,
} from './train';

/** Options of {@link trainFraudModel}. Every default is what the shipped model was trained with. */
export interface TrainFraudModelOptions {
  /** Data and shuffle seed; default 42. */
  readonly seed?: number;
  /** Synthetic payments generated (80 % train, 20 % hold-out); default 200 000. */
  readonly samples?: number;
  /** Model version written to the manifest (`MAJOR.MINOR.PATCH`); default `1.0.0`. */
  readonly version?: string;
  /** Training epochs; default 20. */
  readonly epochs?: number;
  /** Initial learning rate; default 0.02. */
  readonly learningRate?: number;
  /** L2 penalty; default 1e-4. */
  readonly l2?: number;
  /** Mini-batch size; default 256. */
  readonly batchSize?: number;
  /** Called after each epoch. */
  readonly onEpoch?: (p: EpochProgress) => void;
  /** Called with a line of progress text between stages. */
  readonly log?: (line: string) => void;
}

/** What {@link trainFraudModel} produces. */
export interface TrainedFraudModel {
  /** ONNX `ModelProto` bytes (`features [N,17] → score [N,1]`). */
  readonly onnx: Uint8Array;
  /** Manifest, already validated with `manifestSchema`. */
  readonly manifest: ModelManifest;
  /** The float64 model the ONNX graph was built from (its parameters rounded to float32 in the graph). */
  readonly model: LogisticModel;
}

/** Share of samples held out for evaluation. */
export const HOLDOUT_FRACTION = 0.2;
/** Golden rows in the manifest: this many hold-out frauds, then legitimate rows up to {@link GOLDEN_ROWS}. */
const GOLDEN_FRAUDS = 8;
const GOLDEN_ROWS = 32;
/** Largest tolerated |ONNX − TypeScript| score difference before the model is rejected. */
const MAX_FORWARD_DIFF = 1e-5;

const round6 = (v: number): number => (Number.isFinite(v) ? Math.round(v * 1e6) / 1e6 : 0);

/** Scores `n` rows with an in-memory ONNX model on one thread (deterministic on a given machine). */
export async function scoreWithOnnx(onnx: Uint8Array, x: Float32Array, n: number): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(onnx, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  try {
    const input = new ort.Tensor('float32', x, [n, x.length / n]);
    const out = await session.run({ [session.inputNames[0] as string]: input });
    const score = out[session.outputNames[0] as string];
    if (score === undefined) throw new Error('ONNX model returned no output');
    return score.data as Float32Array;
  } finally {
    await session.release();
  }
}

/**
 * Generates seeded synthetic payments, trains the logistic fraud model, builds its ONNX graph
 * (`Sub mean → Div std → Gemm → Sigmoid`) and its manifest (thresholds chosen on the training set; metrics
 * and golden scores computed by running the ONNX bytes in onnxruntime on the hold-out). Deterministic: the same
 * options give byte-identical ONNX and manifest on a given machine (no timestamps are recorded).
 * @throws Error if the ONNX scores differ from the TypeScript forward pass by more than 1e-5.
 */
export async function trainFraudModel(opts: TrainFraudModelOptions = {}): Promise<TrainedFraudModel> {
  const seed = opts.seed ?? 42;
  const samples = opts.samples ?? 200_000;
  const version = opts.version ?? '1.0.0';
  const epochs = opts.epochs ?? 20;
  const learningRate = opts.learningRate ?? 0.02;
  const l2 = opts.l2 ?? 1e-4;
  const batchSize = opts.batchSize ?? 256;
  const log = opts.log ?? ((): void => undefined);
  const d = FEATURE_COUNT;

  log(`generating ${samples} synthetic payments (seed ${seed})`);
  const data = featurizeSamples(generatePayments({ seed, count: samples }));
  const nTrain = Math.round(samples * (1 - HOLDOUT_FRACTION));
  const nHold = samples - nTrain;
  const xTrain = data.x.subarray(0, nTrain * d);
  const yTrain = data.y.subarray(0, nTrain);
  const xHold = data.x.subarray(nTrain * d);
  const yHold = data.y.subarray(nTrain);
  const positives = data.y.reduce((a, v) => a + v, 0);
  log(`train ${nTrain} / hold-out ${nHold} rows, fraud rate ${((positives / samples) * 100).toFixed(2)} %`);

  const model = trainLogistic(xTrain, yTrain, nTrain, d, {
    epochs,
    learningRate,
    l2,
    batchSize,
    seed,
    ...(opts.onEpoch ? { onEpoch: opts.onEpoch } : {}),
  });
  const trainScores = predictLogistic(model, xTrain, nTrain);
  const thresholds = chooseThresholds(trainScores, yTrain);

  const spec: DenseModelSpec = {
    inputName: 'features',
    outputName: 'score',
    inputSize: d,
    mean: Float32Array.from(model.mean),
    std: Float32Array.from(model.std),
    layers: [{ weights: Float32Array.from(model.weights), bias: Float32Array.of(model.bias), activation: 'sigmoid' }],
    producer: 'onnx-scoring-functions/train-model',
    docString: `Fraud score ${version}: logistic regression on ${d} standardised features (seed ${seed}, ${samples} synthetic payments). Output = P(fraud).`,
  };
  const onnx = buildDenseModel(spec);

  log('scoring the hold-out with onnxruntime');
  const holdScores = await scoreWithOnnx(onnx, xHold, nHold);
  const reference = denseForward(spec, xHold, nHold);
  let maxDiff = 0;
  for (let i = 0; i < nHold; i++)
    maxDiff = Math.max(maxDiff, Math.abs((holdScores[i] as number) - (reference[i] as number)));
  if (maxDiff > MAX_FORWARD_DIFF) throw new Error(`ONNX and TypeScript scores differ by ${maxDiff}`);

  const review = metricsAt(holdScores, yHold, thresholds.review);
  const decline = metricsAt(holdScores, yHold, thresholds.decline);
  const holdPositives = yHold.reduce((a, v) => a + v, 0);

  const golden: number[] = [];
  for (let i = 0, f = 0; i < nHold && golden.length < GOLDEN_ROWS; i++) {
    const fraud = yHold[i] === 1;
    if (fraud && f < GOLDEN_FRAUDS) {
      golden.push(i);
      f++;
    } else if (!fraud && golden.length - f < GOLDEN_ROWS - GOLDEN_FRAUDS) golden.push(i);
  }
  const goldenX = new Float32Array(golden.length * d);
  golden.forEach((row, k) => goldenX.set(xHold.subarray(row * d, (row + 1) * d), k * d));
  const goldenScores = await scoreWithOnnx(onnx, goldenX, golden.length);

  const manifest = manifestSchema.parse({
    schemaVersion: 1,
    name: 'fraud',
    version,
    file: `${version}.onnx`,
    sha256: createHash('sha256').update(onnx).digest('hex'),
    input: { name: 'features', shape: [-1, d], dtype: 'float32' },
    output: { name: 'score', shape: [-1, 1], dtype: 'float32' },
    features: FEATURES.map((f) => ({ name: f.name, definition: f.definition })),
    thresholds,
    explanation: {
      kind: 'linear',
      coefficients: Array.from(spec.layers[0]?.weights ?? [], (w, i) => w / (spec.std?.[i] as number)),
      baseline: Array.from(spec.mean ?? []),
    },
    metrics: {
      rocAuc: round6(rocAuc(holdScores, yHold)),
      precisionAtReview: round6(review.precision),
      recallAtReview: round6(review.recall),
      reviewRate: round6(review.flaggedRate),
      precisionAtDecline: round6(decline.precision),
      recallAtDecline: round6(decline.recall),
      declineRate: round6(decline.flaggedRate),
      holdoutSize: nHold,
      holdoutPositives: holdPositives,
      fraudRate: round6(positives / samples),
    },
    training: {
      algorithm: 'logistic-regression (mini-batch SGD, momentum 0.9, linear LR decay to 10 %)',
      seed,
      samples,
      holdoutFraction: HOLDOUT_FRACTION,
      epochs,
      learningRate,
      l2,
      batchSize,
      thresholdPolicy:
        'review: highest score with train recall >= 0.8; decline: lowest score above review with train precision >= 0.8',
    },
    golden: {
      inputs: golden.map((_r, k) => Array.from(goldenX.subarray(k * d, (k + 1) * d))),
      scores: Array.from(goldenScores),
    },
    drift: driftReference(
      FEATURES.map((f) => f.name),
      xTrain,
      nTrain,
      trainScores,
    ),
  });
  return { onnx, manifest, model };
}

/** Manifest as written to disk: 2-space JSON with numeric arrays on one line, trailing newline. */
export function serializeManifest(manifest: ModelManifest): string {
  const json = JSON.stringify(manifest, null, 2);
  return `${json.replace(/\[\s*((?:-?[\d.eE+-]+,\s*)*-?[\d.eE+-]+)\s*\]/g, (_m, body: string) => `[${body.split(/,\s*/).join(', ')}]`)}\n`;
}
