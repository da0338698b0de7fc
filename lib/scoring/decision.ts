import type { ModelManifest } from '../models/manifest';

/** What the service recommends doing with a payment. */
export type Decision = 'approve' | 'review' | 'decline';

/** One contributing reason for a score. */
export interface Reason {
  /** Feature name (stable code). */
  readonly code: string;
  /** Contribution to the logit (log-odds); positive raises risk. Rounded to 4 decimals. */
  readonly contribution: number;
  /** What the feature measures. */
  readonly description: string;
}

/** Maps a score to a decision with the manifest's thresholds (`>= decline` → decline, `>= review` → review). */
export function decide(score: number, thresholds: ModelManifest['thresholds']): Decision {
  if (score >= thresholds.decline) return 'decline';
  if (score >= thresholds.review) return 'review';
  return 'approve';
}

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
