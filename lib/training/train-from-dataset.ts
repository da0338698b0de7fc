/**
 * Trains the next fraud model version from an exported dataset (decisions joined with labels), and measures it
 * beside the current model on the same held-out split. The split is by a hash of the transaction id (stable:
 * the same transaction is always on the same side), 80 % train, 20 % held out.
 */
import { createHash } from 'node:crypto';
import { FEATURES } from '../features/featurizer';
import type { DatasetRow } from '../learning/dataset';
import { driftReference } from '../learning/drift-bins';
import { manifestSchema, type ModelManifest } from '../models/manifest';
import {
  goldenRecord,
  LOGISTIC_ALGORITHM,
  logisticManifestHead,
  scoreWithOnnx,
  thresholdMetrics,
  trainLogisticOnnx,
} from './train-logistic-onnx';

/** A model and its manifest (the current model, to compare against). */
export interface ModelFiles {
  readonly onnx: Uint8Array;
  readonly manifest: ModelManifest;
}

/** Options of {@link trainFromDataset}. */
export interface TrainFromDatasetOptions {
  readonly version: string;
  /** The model serving now: measured on the same held-out split. */
  readonly current?: ModelFiles;
  readonly epochs?: number;
  readonly seed?: number;
  readonly log?: (line: string) => void;
  /**
   * The new model's input features, in order, with their definitions: each read from a row's `features`, else its
   * `signals` (docs/signals.md). Default the shipped 17 (lib/features/featurizer.ts).
   */
  readonly features?: readonly { readonly name: string; readonly definition: string }[];
  /** The signals version those features come from (the manifest's `signals`). */
  readonly signals?: { readonly name: string; readonly version: string };
}

/** AUC and precision/recall at a model's own thresholds, on the held-out split. */
export interface HeldOutMetrics {
  readonly rocAuc: number;
  readonly precisionAtReview: number;
  readonly recallAtReview: number;
  readonly precisionAtDecline: number;
  readonly recallAtDecline: number;
}

/** Whether a transaction is in the held-out 20 % (first byte of its sha256 below 51 of 256). */
export function isHeldOut(transactionId: string): boolean {
  return (createHash('sha256').update(transactionId).digest()[0] as number) < 51;
}

/** The rows' `names` values (row-major; each from the row's features, else its signals) and labels. */
function matrix(rows: readonly DatasetRow[], names: readonly string[]): { x: Float32Array; y: Uint8Array } {
  const d = names.length;
  const x = new Float32Array(rows.length * d);
  const y = new Uint8Array(rows.length);
  rows.forEach((r, i) => {
    names.forEach((name, j) => {
      const v = r.features[name] ?? r.signals?.[name];
      if (typeof v !== 'number')
        throw new Error(
          `row ${r.transactionId}: feature ${name} is missing (neither logged nor replayed: dataset:export --signals)`,
        );
      x[i * d + j] = v;
    });
    y[i] = r.label;
  });
  return { x, y };
}

function heldOutMetrics(scores: ArrayLike<number>, y: Uint8Array, t: ModelManifest['thresholds']): HeldOutMetrics {
  const { reviewRate: _reviewRate, declineRate: _declineRate, ...heldOut } = thresholdMetrics(scores, y, t);
  return heldOut;
}

/**
 * Trains a logistic model on the dataset's training split and writes its manifest: hold-out metrics
 * (`rocAuc`, precision and recall at its thresholds) and, under `current*`, the current model's on the same rows.
 * @throws Error when a split has no positive or no negative row.
 */
export async function trainFromDataset(
  rows: readonly DatasetRow[],
  opts: TrainFromDatasetOptions,
): Promise<{ onnx: Uint8Array; manifest: ModelManifest; heldOut: HeldOutMetrics; current?: HeldOutMetrics }> {
  const log = opts.log ?? ((): void => undefined);
  const features = opts.features ?? FEATURES;
  const names = features.map((f) => f.name);
  const d = names.length;
  const train = rows.filter((r) => !isHeldOut(r.transactionId));
  const hold = rows.filter((r) => isHeldOut(r.transactionId));
  const tr = matrix(train, names);
  const ho = matrix(hold, names);
  for (const [name, y] of [
    ['training', tr.y],
    ['held-out', ho.y],
  ] as const) {
    const pos = y.reduce((a, v) => a + v, 0);
    if (pos === 0 || pos === y.length) throw new Error(`the ${name} split needs both fraud and legitimate rows`);
  }
  log(`dataset: ${train.length} training rows, ${hold.length} held out`);
  const seed = opts.seed ?? 42;
  const epochs = opts.epochs ?? 20;
  const fit = await trainLogisticOnnx({
    xTrain: tr.x,
    yTrain: tr.y,
    nTrain: train.length,
    xHold: ho.x,
    nHold: hold.length,
    d,
    train: { epochs, learningRate: 0.02, l2: 1e-4, seed },
    docString: `Fraud score ${opts.version}: logistic regression on ${d} standardised features, trained on ${train.length} labelled decisions. Output = P(fraud).`,
  });
  const heldOut = heldOutMetrics(fit.holdScores, ho.y, fit.thresholds);
  let current: HeldOutMetrics | undefined;
  if (opts.current !== undefined) {
    // the current model reads its own feature list (it may differ from the new one's)
    const curNames = opts.current.manifest.features.map((f) => f.name);
    const cur = await scoreWithOnnx(opts.current.onnx, matrix(hold, curNames).x, hold.length);
    current = heldOutMetrics(cur, ho.y, opts.current.manifest.thresholds);
  }
  const goldenRows = Math.min(32, hold.length);
  const prefixed = (m: HeldOutMetrics | undefined, prefix: string): Record<string, number> =>
    Object.fromEntries(
      Object.entries(m ?? {}).map(([k, v]) => [`${prefix}${k.charAt(0).toUpperCase()}${k.slice(1)}`, v as number]),
    );
  const manifest = manifestSchema.parse({
    ...logisticManifestHead(opts.version, fit, features),
    ...(opts.signals === undefined ? {} : { signals: { name: opts.signals.name, version: opts.signals.version } }),
    metrics: {
      ...heldOut,
      ...prefixed(current, 'current'),
      holdoutSize: hold.length,
      holdoutPositives: ho.y.reduce((a, v) => a + v, 0),
    },
    training: {
      algorithm: LOGISTIC_ALGORITHM,
      source: 'dataset',
      rows: rows.length,
      seed,
      epochs,
      split: 'held out: first byte of sha256(transactionId) < 51 (20 %)',
      ...(opts.current === undefined ? {} : { comparedWith: opts.current.manifest.version }),
    },
    golden: await goldenRecord(fit.onnx, ho.x.slice(0, goldenRows * d), goldenRows, d),
    drift: driftReference(names, tr.x, train.length, fit.trainScores),
  });
  const onnx = fit.onnx;
  return { onnx, manifest, heldOut, ...(current === undefined ? {} : { current }) };
}
