/**
 * The step both trainers share: fit the logistic model, build its ONNX graph, score the hold-out with the ONNX bytes
 * in onnxruntime (checked against the TypeScript forward pass), and the manifest parts that follow from that
 * (identity and explanation, threshold metrics, golden rows). Used by `train-fraud-model.ts` (synthetic payments)
 * and `train-from-dataset.ts` (labelled decisions).
 */
import { createHash } from 'node:crypto';
import * as ort from 'onnxruntime-node';
import { FEATURES } from '../features/featurizer';
import type { ModelManifest } from '../models/manifest';
import { buildDenseModel, denseForward, type DenseModelSpec } from './onnx-writer';
import {
  chooseThresholds,
  type LogisticModel,
  metricsAt,
  predictLogistic,
  rocAuc,
  trainLogistic,
  type TrainOptions,
} from './train';

/** Largest tolerated |ONNX − TypeScript| score difference before the model is rejected. */
const MAX_FORWARD_DIFF = 1e-5;

/** `training.algorithm` of a manifest written by {@link trainLogisticOnnx}'s callers. */
export const LOGISTIC_ALGORITHM = 'logistic-regression (mini-batch SGD, momentum 0.9, linear LR decay to 10 %)';

/** Rounds a metric to 6 decimals (non-finite → 0), as manifests record them. */
export const round6 = (v: number): number => (Number.isFinite(v) ? Math.round(v * 1e6) / 1e6 : 0);

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

/** Input of {@link trainLogisticOnnx}: the split (row-major features, `d` columns) and how to train. */
export interface LogisticOnnxInput {
  readonly xTrain: Float32Array;
  readonly yTrain: Uint8Array;
  readonly nTrain: number;
  readonly xHold: Float32Array;
  readonly nHold: number;
  /** Features per row. */
  readonly d: number;
  readonly train: TrainOptions;
  /** The ONNX graph's doc string. */
  readonly docString: string;
  /** Called with a line of progress text before the hold-out is scored. */
  readonly log?: (line: string) => void;
}

/** What {@link trainLogisticOnnx} produces. */
export interface LogisticOnnx {
  /** The float64 model the ONNX graph was built from. */
  readonly model: LogisticModel;
  /** The model's scores on the training rows. */
  readonly trainScores: Float64Array;
  /** Thresholds chosen on the training rows. */
  readonly thresholds: ModelManifest['thresholds'];
  /** The graph (`Sub mean → Div std → Gemm → Sigmoid`), its parameters rounded to float32. */
  readonly spec: DenseModelSpec;
  /** ONNX `ModelProto` bytes (`features [N,d] → score [N,1]`). */
  readonly onnx: Uint8Array;
  /** The ONNX bytes' scores (onnxruntime) on the hold-out rows. */
  readonly holdScores: Float32Array;
}

/**
 * Trains a logistic model on the training rows, chooses its thresholds there, builds its ONNX graph and scores the
 * hold-out with the ONNX bytes in onnxruntime.
 * @throws Error if the ONNX scores differ from the TypeScript forward pass by more than 1e-5.
 */
export async function trainLogisticOnnx(input: LogisticOnnxInput): Promise<LogisticOnnx> {
  const { xTrain, yTrain, nTrain, xHold, nHold, d } = input;
  const model = trainLogistic(xTrain, yTrain, nTrain, d, input.train);
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
    docString: input.docString,
  };
  const onnx = buildDenseModel(spec);
  input.log?.('scoring the hold-out with onnxruntime');
  const holdScores = await scoreWithOnnx(onnx, xHold, nHold);
  const reference = denseForward(spec, xHold, nHold);
  let maxDiff = 0;
  for (let i = 0; i < nHold; i++)
    maxDiff = Math.max(maxDiff, Math.abs((holdScores[i] as number) - (reference[i] as number)));
  if (maxDiff > MAX_FORWARD_DIFF) throw new Error(`ONNX and TypeScript scores differ by ${maxDiff}`);
  return { model, trainScores, thresholds, spec, onnx, holdScores };
}

/**
 * The manifest's fields from `schemaVersion` to `explanation` for a fraud model of this version: file name, sha256,
 * tensors, the featurizer's features, thresholds and the linear explanation (coefficients per raw feature unit).
 */
export function logisticManifestHead(
  version: string,
  fit: Pick<LogisticOnnx, 'spec' | 'onnx' | 'thresholds'>,
  features: readonly { readonly name: string; readonly definition: string }[] = FEATURES,
) {
  const { spec } = fit;
  return {
    schemaVersion: 1,
    name: 'fraud',
    version,
    file: `${version}.onnx`,
    sha256: createHash('sha256').update(fit.onnx).digest('hex'),
    input: { name: 'features', shape: [-1, spec.inputSize], dtype: 'float32' },
    output: { name: 'score', shape: [-1, 1], dtype: 'float32' },
    features: features.map((f) => ({ name: f.name, definition: f.definition })),
    thresholds: fit.thresholds,
    explanation: {
      kind: 'linear',
      coefficients: Array.from(spec.layers[0]?.weights ?? [], (w, i) => w / (spec.std?.[i] as number)),
      baseline: Array.from(spec.mean ?? []),
    },
  };
}

/** ROC AUC, and precision, recall and flagged share at each threshold, rounded to 6 decimals. */
export interface ThresholdMetricSet {
  readonly rocAuc: number;
  readonly precisionAtReview: number;
  readonly recallAtReview: number;
  readonly reviewRate: number;
  readonly precisionAtDecline: number;
  readonly recallAtDecline: number;
  readonly declineRate: number;
}

/** Metrics of `scores` against labels `y` at thresholds `t` (in the order manifests record them). */
export function thresholdMetrics(
  scores: ArrayLike<number>,
  y: Uint8Array,
  t: ModelManifest['thresholds'],
): ThresholdMetricSet {
  const review = metricsAt(scores, y, t.review);
  const decline = metricsAt(scores, y, t.decline);
  return {
    rocAuc: round6(rocAuc(scores, y)),
    precisionAtReview: round6(review.precision),
    recallAtReview: round6(review.recall),
    reviewRate: round6(review.flaggedRate),
    precisionAtDecline: round6(decline.precision),
    recallAtDecline: round6(decline.recall),
    declineRate: round6(decline.flaggedRate),
  };
}

/** The manifest's `golden` record: the `n` rows of `x` (`d` columns) and the ONNX model's scores for them. */
export async function goldenRecord(
  onnx: Uint8Array,
  x: Float32Array,
  n: number,
  d: number,
): Promise<{ inputs: number[][]; scores: number[] }> {
  const scores = await scoreWithOnnx(onnx, x, n);
  return {
    inputs: Array.from({ length: n }, (_v, k) => Array.from(x.subarray(k * d, (k + 1) * d))),
    scores: Array.from(scores),
  };
}
