/** The nearest-rank percentile the benchmarks report. */

/**
 * The `p`th percentile (0–100) of ascending `sorted` values, nearest rank: the value at index
 * ⌊p/100 · n⌋, capped at the last; `NaN` when there is none. p = 50 on an even count gives the upper median.
 */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}
