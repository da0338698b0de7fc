/**
 * Drift over time from the decision log: the PSI of each feature and of the score, per time bucket, against the
 * training bins the model's manifest carries (the same bins and formula as the live drift monitor).
 */
import type { DecisionRecord } from './decision-record';
import { binOf, psi, type Bins, type DriftReference } from './drift-bins';
import { DRIFT_MIN_SAMPLES } from './drift-monitor';

/** One bucket of the history. */
export interface DriftPoint {
  /** The bucket's start (ISO 8601 UTC). */
  readonly start: string;
  /** Scored decisions of the model version in the bucket. */
  readonly samples: number;
  /** PSI of the score; `null` below {@link DRIFT_MIN_SAMPLES} samples. */
  readonly score: number | null;
  /** PSI of each feature, by name; `null` below {@link DRIFT_MIN_SAMPLES} samples. */
  readonly features: Readonly<Record<string, number | null>>;
}

interface Bucket {
  samples: number;
  score: Float64Array;
  features: Float64Array[];
}

const round4 = (v: number): number => Math.round(v * 1e4) / 1e4;

/**
 * The PSI history of one model version: records of other versions are skipped; buckets of `bucketMs` from
 * `fromMs` to `toMs`, every bucket listed (empty ones with `samples: 0`).
 */
export function driftHistory(
  records: Iterable<DecisionRecord>,
  version: string,
  reference: DriftReference,
  window: { readonly fromMs: number; readonly toMs: number; readonly bucketMs: number },
): DriftPoint[] {
  const { fromMs, toMs, bucketMs } = window;
  const n = Math.max(0, Math.ceil((toMs - fromMs) / bucketMs));
  const buckets: Bucket[] = Array.from({ length: n }, () => ({
    samples: 0,
    score: new Float64Array(reference.score.expected.length),
    features: reference.features.map((f) => new Float64Array(f.expected.length)),
  }));
  const count = (bins: Bins, counts: Float64Array, x: number): void => {
    const i = Math.min(binOf(bins.edges, x), counts.length - 1);
    counts[i] = (counts[i] ?? 0) + 1;
  };
  for (const r of records) {
    if (r.model.version !== version || r.score === null) continue; // as the live monitor: scored payments only
    const t = Date.parse(r.decidedAt);
    const b = buckets[Math.floor((t - fromMs) / bucketMs)];
    if (b === undefined || t < fromMs) continue;
    b.samples++;
    count(reference.score, b.score, r.score);
    reference.features.forEach((f, i) => count(f, b.features[i] as Float64Array, r.features[f.name] ?? Number.NaN));
  }
  return buckets.map((b, k) => {
    const enough = b.samples >= DRIFT_MIN_SAMPLES;
    const total = (counts: Float64Array): number => counts.reduce((s, c) => s + c, 0);
    return {
      start: new Date(fromMs + k * bucketMs).toISOString(),
      samples: b.samples,
      score: enough ? round4(psi(reference.score.expected, b.score, total(b.score))) : null,
      features: Object.fromEntries(
        reference.features.map((f, i) => {
          const c = b.features[i] as Float64Array;
          return [f.name, enough ? round4(psi(f.expected, c, total(c))) : null];
        }),
      ),
    };
  });
}
