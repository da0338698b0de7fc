/**
 * Distribution bins and the population stability index (PSI). Training writes each feature's and the score's
 * bins into the manifest (`drift`); the drift monitor counts live values in the same bins and compares.
 *
 * A distribution is `{ edges, expected }`: `edges` are the inner cut points in increasing order (k − 1 edges
 * for k bins; bin i holds edges[i − 1] ≤ x < edges[i]), `expected` the training share of each bin.
 */

/** One distribution as the manifest keeps it. */
export interface Bins {
  readonly edges: readonly number[];
  readonly expected: readonly number[];
}

/** The manifest's `drift` block: the training distribution of each feature (by name) and of the score. */
export interface DriftReference {
  readonly features: readonly ({ readonly name: string } & Bins)[];
  readonly score: Bins;
}

/** Shares below this count as this (an empty bin would make PSI infinite). */
export const PSI_FLOOR = 1e-4;
/** PSI above this is a significant shift (the alert's threshold). */
export const PSI_ALERT = 0.2;

const round6 = (v: number): number => Math.round(v * 1e6) / 1e6;

/** The bin of `x` (binary search; NaN falls in bin 0). */
export function binOf(edges: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (x >= (edges[mid] as number)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Bins of `values`: a column with at most `maxBins` distinct values gets one bin per value (cut half-way
 * between neighbours, so a rare 1 in a 0/1 flag has its own bin); any other column is cut at its deciles
 * (equal cut points merge). Edges are rounded to 6 decimals and the shares computed with the rounded edges.
 */
export function binsOf(values: ArrayLike<number>, maxBins = 10): Bins {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  const distinct: number[] = [];
  for (let i = 0; i < n && distinct.length <= maxBins; i++)
    if (i === 0 || sorted[i] !== sorted[i - 1]) distinct.push(sorted[i] as number);
  const edges: number[] = [];
  if (distinct.length <= maxBins)
    for (let i = 1; i < distinct.length; i++)
      edges.push(round6(((distinct[i - 1] as number) + (distinct[i] as number)) / 2));
  else
    for (let k = 1; k < maxBins && n > 0; k++) {
      const q = round6(sorted[Math.min(n - 1, Math.floor((k * n) / maxBins))] as number);
      if (q > (sorted[0] as number) && (edges.length === 0 || q > (edges.at(-1) as number))) edges.push(q);
    }
  // a column almost always at its minimum (a rare count): one cut above the minimum, so the rare values have a bin
  if (edges.length === 0 && distinct.length > 1)
    edges.push(round6(((distinct[0] as number) + (distinct[1] as number)) / 2));
  const counts = new Array<number>(edges.length + 1).fill(0);
  for (let i = 0; i < n; i++) counts[binOf(edges, sorted[i] as number)]! += 1;
  return { edges, expected: counts.map((c) => round6(n === 0 ? 0 : c / n)) };
}

/** PSI = Σ (actual − expected) · ln(actual / expected) over the bins, shares floored at {@link PSI_FLOOR}. */
export function psi(expected: ArrayLike<number>, actualCounts: ArrayLike<number>, total: number): number {
  let s = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = Math.max(expected[i] as number, PSI_FLOOR);
    const a = Math.max(total === 0 ? 0 : (actualCounts[i] as number) / total, PSI_FLOOR);
    s += (a - e) * Math.log(a / e);
  }
  return s;
}

/** The drift reference of a training set: `x` is `n × names.length` row-major, `scores` one per row. */
export function driftReference(
  names: readonly string[],
  x: ArrayLike<number>,
  n: number,
  scores: ArrayLike<number>,
): DriftReference {
  const d = names.length;
  const col = new Float64Array(n);
  const features = names.map((name, j) => {
    for (let i = 0; i < n; i++) col[i] = x[i * d + j] as number;
    return { name, ...binsOf(col) };
  });
  return { features, score: binsOf(scores) };
}
