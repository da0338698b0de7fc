import type { Decision } from '../domain/decision';
import type { ModelManifest } from '../models/manifest';

/** One contributing reason for a score. */
export interface Reason {
  /** Feature name (stable code). */
  readonly code: string;
  /** Contribution to the logit (log-odds); positive raises risk. Rounded to 4 decimals. */
  readonly contribution: number;
  /** What the feature measures. */
  readonly description: string;
}

/** Whether a model output is usable as a score: a finite number in [0, 1]. */
export function isValidScore(score: number): boolean {
  return Number.isFinite(score) && score >= 0 && score <= 1;
}

/** What is wrong with an invalid score (a metric attribute; never the value itself). */
export type InvalidScoreKind = 'missing' | 'nan' | 'infinite' | 'out_of_range';

/** Classifies a score that failed {@link isValidScore}; `undefined` for a valid one. */
export function invalidScoreKind(score: number | undefined): InvalidScoreKind | undefined {
  if (score === undefined) return 'missing';
  if (Number.isNaN(score)) return 'nan';
  if (!Number.isFinite(score)) return 'infinite';
  return isValidScore(score) ? undefined : 'out_of_range';
}

/** The reason code a result carries when the model gave no valid score (the decision is then `review`). */
export const MODEL_OUTPUT_INVALID = 'model_output_invalid';

/**
 * Maps a score to a decision with the manifest's thresholds (`>= decline` → decline, `< review` →
 * approve, else review). Fails closed: a score that is not a finite number in [0, 1] (NaN, ±Infinity,
 * out of range) is `review`, and so is any score when a threshold is NaN; `approve` needs a valid
 * score strictly below a real `review` threshold.
 */
export function decide(score: number, thresholds: ModelManifest['thresholds']): Decision {
  if (!isValidScore(score)) return 'review';
  if (score >= thresholds.decline) return 'decline';
  if (score < thresholds.review) return 'approve';
  return 'review';
}

/** The single reason of a result whose score was invalid. */
export const MODEL_OUTPUT_INVALID_REASON: Reason = Object.freeze({
  code: MODEL_OUTPUT_INVALID,
  contribution: 0,
  description: 'The model gave no valid score (not a finite number in [0, 1]); the payment is held for review.',
});

/**
 * Top contributing reasons: the features that raise the risk most, by their logit contribution
 * `coefficients[i] * (x[i] - baseline[i])` from the manifest's linear explanation. Empty when the model has none.
 * @param max how many reasons at most; default 3.
 */
export function topReasons(row: Float32Array, manifest: ModelManifest, max = 3): Reason[] {
  const ex = manifest.explanation;
  if (ex === undefined) return [];
  const all: Reason[] = [];
  manifest.features.forEach((f, i) => {
    const c = (ex.coefficients[i] ?? 0) * ((row[i] ?? 0) - (ex.baseline[i] ?? 0));
    if (c > 1e-6) all.push({ code: f.name, contribution: Math.round(c * 1e4) / 1e4, description: f.definition });
  });
  return all.sort((a, b) => b.contribution - a.contribution || a.code.localeCompare(b.code)).slice(0, max);
}
