import { Prng } from './prng';

/**
 * Logistic regression in plain TypeScript (float64, deterministic) plus the evaluation helpers used to pick
 * and report the fraud model's thresholds. Inputs are row-major `n × d` matrices.
 */

/** Per-feature standardisation `(x - mean) / std`. */
export interface Standardization {
  readonly mean: Float64Array;
  /** Population standard deviation; 1 where a feature is constant (so it is only centred). */
  readonly std: Float64Array;
}

/** Train-set mean and population standard deviation of each of the `d` columns. */
export function computeStandardization(x: ArrayLike<number>, n: number, d: number): Standardization {
  const mean = new Float64Array(d);
  const std = new Float64Array(d);
  for (let r = 0; r < n; r++) for (let j = 0; j < d; j++) mean[j] = (mean[j] as number) + (x[r * d + j] as number);
  for (let j = 0; j < d; j++) mean[j] = (mean[j] as number) / n;
  for (let r = 0; r < n; r++) {
    for (let j = 0; j < d; j++) {
      const c = (x[r * d + j] as number) - (mean[j] as number);
      std[j] = (std[j] as number) + c * c;
    }
  }
  for (let j = 0; j < d; j++) {
    const s = Math.sqrt((std[j] as number) / n);
    std[j] = s > 1e-12 ? s : 1;
  }
  return { mean, std };
}

/** A trained logistic model: `p = σ(bias + Σ weights[j] · (x[j] - mean[j]) / std[j])`. */
export interface LogisticModel extends Standardization {
  /** Weights in standardised space. */
  readonly weights: Float64Array;
  readonly bias: number;
}

/** Progress reported after each epoch. */
export interface EpochProgress {
  /** 1-based epoch number. */
  readonly epoch: number;
  readonly epochs: number;
  /** Mean binary cross-entropy on the training set (without the L2 term). */
  readonly loss: number;
  /** ROC AUC on the training set. */
  readonly auc: number;
  /** Learning rate used during this epoch. */
  readonly learningRate: number;
}

/** Hyper-parameters of {@link trainLogistic}. */
export interface TrainOptions {
  /** Passes over the training set; default 20. */
  readonly epochs?: number;
  /** Initial step size; decays linearly to 10 % of it over the epochs. Default 0.05. */
  readonly learningRate?: number;
  /** L2 penalty on the weights (not the bias), `l2/2 · ‖w‖²` per sample. Default 1e-4. */
  readonly l2?: number;
  /** Mini-batch size; default 256. */
  readonly batchSize?: number;
  /** Heavy-ball momentum; default 0.9. */
  readonly momentum?: number;
  /** Seed of the per-epoch shuffles; default 1. */
  readonly seed?: number;
  readonly onEpoch?: (p: EpochProgress) => void;
}

const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/** Scores (probabilities) of the `n` rows of `x` under `model`. */
export function predictLogistic(model: LogisticModel, x: ArrayLike<number>, n: number): Float64Array {
  const d = model.weights.length;
  const out = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    let z = model.bias;
    for (let j = 0; j < d; j++) {
      z +=
        (model.weights[j] as number) *
        (((x[r * d + j] as number) - (model.mean[j] as number)) / (model.std[j] as number));
    }
    out[r] = sigmoid(z);
  }
  return out;
}

/** Mean binary cross-entropy of probabilities `p` against 0/1 labels (probabilities clipped to [1e-12, 1-1e-12]). */
export function logLoss(p: ArrayLike<number>, y: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < p.length; i++) {
    const q = Math.min(1 - 1e-12, Math.max(1e-12, p[i] as number));
    s -= (y[i] as number) === 1 ? Math.log(q) : Math.log(1 - q);
  }
  return s / p.length;
}

/**
 * Trains logistic regression by mini-batch gradient descent with momentum and L2, on features standardised
 * with the training set's mean/std. The bias starts at the log-odds of the base rate. Deterministic: the
 * same data and options give the same model bit for bit.
 * @param x `n × d` row-major features; @param y 0/1 labels.
 */
export function trainLogistic(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  n: number,
  d: number,
  opts: TrainOptions = {},
): LogisticModel {
  const epochs = opts.epochs ?? 20;
  const lr0 = opts.learningRate ?? 0.05;
  const l2 = opts.l2 ?? 1e-4;
  const batchSize = opts.batchSize ?? 256;
  const momentum = opts.momentum ?? 0.9;
  const rng = new Prng(opts.seed ?? 1);
  const { mean, std } = computeStandardization(x, n, d);
  const xs = new Float64Array(n * d);
  for (let r = 0; r < n; r++)
    for (let j = 0; j < d; j++) xs[r * d + j] = ((x[r * d + j] as number) - (mean[j] as number)) / (std[j] as number);
  let positives = 0;
  for (let r = 0; r < n; r++) positives += y[r] as number;
  const base = Math.min(1 - 1e-6, Math.max(1e-6, positives / n));
  const w = new Float64Array(d);
  let b = Math.log(base / (1 - base));
  const vw = new Float64Array(d);
  let vb = 0;
  const gw = new Float64Array(d);
  const order = Array.from({ length: n }, (_v, i) => i);
  for (let epoch = 1; epoch <= epochs; epoch++) {
    const lr = lr0 * (1 - (0.9 * (epoch - 1)) / Math.max(1, epochs - 1));
    rng.shuffle(order);
    for (let start = 0; start < n; start += batchSize) {
      const end = Math.min(n, start + batchSize);
      gw.fill(0);
      let gb = 0;
      for (let k = start; k < end; k++) {
        const r = order[k] as number;
        let z = b;
        for (let j = 0; j < d; j++) z += (w[j] as number) * (xs[r * d + j] as number);
        const err = sigmoid(z) - (y[r] as number);
        for (let j = 0; j < d; j++) gw[j] = (gw[j] as number) + err * (xs[r * d + j] as number);
        gb += err;
      }
      const m = end - start;
      for (let j = 0; j < d; j++) {
        vw[j] = momentum * (vw[j] as number) - lr * ((gw[j] as number) / m + l2 * (w[j] as number));
        w[j] = (w[j] as number) + (vw[j] as number);
      }
      vb = momentum * vb - lr * (gb / m);
      b += vb;
    }
    if (opts.onEpoch !== undefined) {
      const p = predictLogistic({ weights: w, bias: b, mean, std }, x, n);
      opts.onEpoch({ epoch, epochs, loss: logLoss(p, y), auc: rocAuc(p, y), learningRate: lr });
    }
  }
  return { weights: w, bias: b, mean, std };
}

/**
 * ROC AUC by the rank statistic (Mann–Whitney U), ties counted as ½. Probability that a random positive
 * scores above a random negative. O(n log n).
 * @returns NaN when there is no positive or no negative label.
 */
export function rocAuc(scores: ArrayLike<number>, labels: ArrayLike<number>): number {
  const n = scores.length;
  const idx = Array.from({ length: n }, (_v, i) => i).sort((a, c) => (scores[a] as number) - (scores[c] as number));
  let pos = 0;
  let rankSumPos = 0;
  for (let i = 0; i < n;) {
    let j = i;
    while (j + 1 < n && scores[idx[j + 1] as number] === scores[idx[i] as number]) j++;
    const avgRank = (i + j + 2) / 2; // 1-based average rank of the tie group
    for (let k = i; k <= j; k++) {
      if ((labels[idx[k] as number] as number) === 1) {
        pos++;
        rankSumPos += avgRank;
      }
    }
    i = j + 1;
  }
  const neg = n - pos;
  if (pos === 0 || neg === 0) return NaN;
  return (rankSumPos - (pos * (pos + 1)) / 2) / (pos * neg);
}

/** Confusion-derived rates of the rule `score >= threshold`. */
export interface ThresholdMetrics {
  readonly threshold: number;
  /** TP / flagged; NaN if nothing is flagged. */
  readonly precision: number;
  /** TP / positives; NaN without positives. */
  readonly recall: number;
  /** Share of all rows flagged. */
  readonly flaggedRate: number;
}

/** Precision, recall and flagged share of `score >= threshold`. */
export function metricsAt(scores: ArrayLike<number>, labels: ArrayLike<number>, threshold: number): ThresholdMetrics {
  let tp = 0;
  let flagged = 0;
  let positives = 0;
  for (let i = 0; i < scores.length; i++) {
    const pos = (labels[i] as number) === 1;
    if (pos) positives++;
    if ((scores[i] as number) >= threshold) {
      flagged++;
      if (pos) tp++;
    }
  }
  return {
    threshold,
    precision: flagged === 0 ? NaN : tp / flagged,
    recall: positives === 0 ? NaN : tp / positives,
    flaggedRate: flagged / scores.length,
  };
}

/** Targets of {@link chooseThresholds}. */
export interface ThresholdTargets {
  /** Review must catch at least this share of frauds; default 0.8. */
  readonly reviewRecall?: number;
  /** Decline must be right at least this often; default 0.8. */
  readonly declinePrecision?: number;
  /** Decline must catch at least this many frauds on the data it is chosen on; default 10. */
  readonly minDeclinePositives?: number;
}

/**
 * Chooses the operating thresholds on scored, labelled data (the training set, so the hold-out stays unbiased).
 * - **review** (send to a human analyst): the highest threshold whose recall is ≥ `reviewRecall` — fraud
 *   ops want most fraud in front of an analyst while keeping the queue as small as that allows.
 * - **decline** (block automatically): the lowest threshold above review whose precision is ≥
 *   `declinePrecision` with ≥ `minDeclinePositives` frauds caught — wrongly declined customers are costly, so
 *   this one is precision-oriented. Falls back to the 99.5th score percentile if the target is never met.
 * Both are rounded down to 4 decimals (so review still meets its recall) and kept within (0, 1), review < decline.
 */
export function chooseThresholds(
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
  targets: ThresholdTargets = {},
): { review: number; decline: number } {
  const reviewRecall = targets.reviewRecall ?? 0.8;
  const declinePrecision = targets.declinePrecision ?? 0.8;
  const minPos = targets.minDeclinePositives ?? 10;
  const idx = Array.from({ length: scores.length }, (_v, i) => i).sort(
    (a, c) => (scores[c] as number) - (scores[a] as number),
  );
  let positives = 0;
  for (let i = 0; i < labels.length; i++) positives += labels[i] as number;
  const s = (k: number): number => scores[idx[k] as number] as number;
  // Walk down the ranking; cut points are only where the score changes (ties flag together).
  let tp = 0;
  let review = NaN;
  let decline = NaN;
  for (let k = 0; k < idx.length; k++) {
    tp += labels[idx[k] as number] as number;
    if (k + 1 < idx.length && s(k + 1) === s(k)) continue;
    if (tp >= minPos && tp / (k + 1) >= declinePrecision) decline = s(k);
    if (tp >= reviewRecall * positives) {
      review = s(k);
      break;
    }
  }
  if (Number.isNaN(review)) review = s(idx.length - 1);
  if (Number.isNaN(decline) || decline <= review) decline = Math.max(s(Math.floor(idx.length * 0.005)), review);
  const floor4 = (t: number): number => Math.floor(t * 1e4) / 1e4;
  const r = Math.min(0.9998, Math.max(1e-4, floor4(review)));
  const dcl = Math.min(0.9999, Math.max(r + 1e-4, floor4(decline)));
  return { review: r, decline: Number(dcl.toFixed(4)) };
}
