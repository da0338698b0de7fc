/**
 * Shadow scoring statistics: for the requests a candidate scores off the response path, the score
 * distributions of the active and the candidate version side by side (10 bins over [0, 1]), their means
 * and the mean absolute difference. Counts are additive, so instances flush deltas into the fleet store.
 */

/** Histogram bins over [0, 1]. */
export const SHADOW_BINS = 10;
/** Most (active, candidate) pairs one recorder keeps between flushes. */
export const MAX_SHADOW_PAIRS = 8;

/** Additive counts for one (active, candidate) pair. */
export interface ShadowCounts {
  readonly activeVersion: string;
  readonly candidateVersion: string;
  n: number;
  readonly activeBins: number[];
  readonly candidateBins: number[];
  sumActive: number;
  sumCandidate: number;
  sumAbsDiff: number;
  /** Shadow runs that failed or were skipped for overload (never affect responses). */
  errors: number;
}

/** One version's side of the report. */
export interface ShadowDistribution {
  readonly version: string;
  readonly n: number;
  readonly mean: number | null;
  /** `count` scores in `[from, to)` (the last bin includes 1). */
  readonly histogram: readonly { readonly from: number; readonly to: number; readonly count: number }[];
}

/** The side-by-side report the admin API shows. */
export interface ScoreShadowReport {
  readonly active: ShadowDistribution;
  readonly candidate: ShadowDistribution;
  /** Mean |candidate − active| over the shadowed requests. */
  readonly meanAbsDiff: number | null;
  readonly errors: number;
}

/** Zero counts for a pair. */
export function emptyCounts(activeVersion: string, candidateVersion: string): ShadowCounts {
  return {
    activeVersion,
    candidateVersion,
    n: 0,
    activeBins: new Array<number>(SHADOW_BINS).fill(0),
    candidateBins: new Array<number>(SHADOW_BINS).fill(0),
    sumActive: 0,
    sumCandidate: 0,
    sumAbsDiff: 0,
    errors: 0,
  };
}

/** Bin of a score in [0, 1]. */
export function scoreBinOf(score: number): number {
  return Math.min(SHADOW_BINS - 1, Math.max(0, Math.floor(score * SHADOW_BINS)));
}

/** Adds `delta` into `into` (same pair). */
export function addCounts(into: ShadowCounts, delta: ShadowCounts): ShadowCounts {
  into.n += delta.n;
  into.sumActive += delta.sumActive;
  into.sumCandidate += delta.sumCandidate;
  into.sumAbsDiff += delta.sumAbsDiff;
  into.errors += delta.errors;
  for (let i = 0; i < SHADOW_BINS; i++) {
    into.activeBins[i] = (into.activeBins[i] ?? 0) + (delta.activeBins[i] ?? 0);
    into.candidateBins[i] = (into.candidateBins[i] ?? 0) + (delta.candidateBins[i] ?? 0);
  }
  return into;
}

function distribution(version: string, n: number, sum: number, bins: readonly number[]): ShadowDistribution {
  return {
    version,
    n,
    mean: n === 0 ? null : Math.round((sum / n) * 1e6) / 1e6,
    histogram: bins.map((count, i) => ({ from: i / SHADOW_BINS, to: (i + 1) / SHADOW_BINS, count })),
  };
}

/** The report of accumulated counts. */
export function shadowReport(c: ShadowCounts): ScoreShadowReport {
  return {
    active: distribution(c.activeVersion, c.n, c.sumActive, c.activeBins),
    candidate: distribution(c.candidateVersion, c.n, c.sumCandidate, c.candidateBins),
    meanAbsDiff: c.n === 0 ? null : Math.round((c.sumAbsDiff / c.n) * 1e6) / 1e6,
    errors: c.errors,
  };
}

/** Accumulates one instance's shadow results until the next flush (bounded to {@link MAX_SHADOW_PAIRS} pairs). */
export class ShadowRecorder {
  private readonly pairs = new Map<string, ShadowCounts>();

  private pair(active: string, candidate: string): ShadowCounts | undefined {
    const key = `${active}\u0000${candidate}`;
    let c = this.pairs.get(key);
    if (c === undefined) {
      if (this.pairs.size >= MAX_SHADOW_PAIRS) return undefined;
      c = emptyCounts(active, candidate);
      this.pairs.set(key, c);
    }
    return c;
  }

  /** Records one shadowed request: the served (active) score and the candidate's. */
  record(active: string, candidate: string, activeScore: number, candidateScore: number): void {
    const c = this.pair(active, candidate);
    if (c === undefined) return;
    c.n++;
    c.sumActive += activeScore;
    c.sumCandidate += candidateScore;
    c.sumAbsDiff += Math.abs(candidateScore - activeScore);
    const a = scoreBinOf(activeScore);
    const b = scoreBinOf(candidateScore);
    c.activeBins[a] = (c.activeBins[a] ?? 0) + 1;
    c.candidateBins[b] = (c.candidateBins[b] ?? 0) + 1;
  }

  /** Records a shadow run that failed or was skipped. */
  error(active: string, candidate: string): void {
    const c = this.pair(active, candidate);
    if (c !== undefined) c.errors++;
  }

  /** Takes the counts accumulated since the last drain. */
  drain(): ShadowCounts[] {
    const out = [...this.pairs.values()];
    this.pairs.clear();
    return out;
  }

  /** Puts counts back (a flush failed); pairs beyond the bound are dropped. */
  restore(counts: readonly ShadowCounts[]): void {
    for (const d of counts) {
      const c = this.pair(d.activeVersion, d.candidateVersion);
      if (c !== undefined) addCounts(c, d);
    }
  }
}
