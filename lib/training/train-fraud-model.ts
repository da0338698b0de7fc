import { FEATURE_COUNT, FEATURES } from '../features/featurizer';
import { manifestSchema, type ModelManifest } from '../models/manifest';
import { driftReference } from '../learning/drift-bins';
import { featurizeSamples, generatePayments } from './synthetic-payments';
import type { EpochProgress, LogisticModel } from './train';
import {
  goldenRecord,
  LOGISTIC_ALGORITHM,
  logisticManifestHead,
  round6,
  thresholdMetrics,
  trainLogisticOnnx,
} from './train-logistic-onnx';

export { scoreWithOnnx } from './train-logistic-onnx';

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

  const fit = await trainLogisticOnnx({
    xTrain,
    yTrain,
    nTrain,
    xHold,
    nHold,
    d,
    train: { epochs, learningRate, l2, batchSize, seed, ...(opts.onEpoch ? { onEpoch: opts.onEpoch } : {}) },
    docString: `Fraud score ${version}: logistic regression on ${d} standardised features (seed ${seed}, ${samples} synthetic payments). Output = P(fraud).`,
    log,
  });

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

  const manifest = manifestSchema.parse({
    ...logisticManifestHead(version, fit),
    metrics: {
      ...thresholdMetrics(fit.holdScores, yHold, fit.thresholds),
      holdoutSize: nHold,
      holdoutPositives: yHold.reduce((a, v) => a + v, 0),
      fraudRate: round6(positives / samples),
    },
    training: {
      algorithm: LOGISTIC_ALGORITHM,
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
    golden: await goldenRecord(fit.onnx, goldenX, golden.length, d),
    drift: driftReference(
      FEATURES.map((f) => f.name),
      xTrain,
      nTrain,
      fit.trainScores,
    ),
  });
  return { onnx: fit.onnx, manifest, model: fit.model };
}

/** Manifest as written to disk: 2-space JSON with numeric arrays on one line, trailing newline. */
export function serializeManifest(manifest: ModelManifest): string {
  const json = JSON.stringify(manifest, null, 2);
  return `${json.replace(/\[\s*((?:-?[\d.eE+-]+,\s*)*-?[\d.eE+-]+)\s*\]/g, (_m, body: string) => `[${body.split(/,\s*/).join(', ')}]`)}\n`;
}
