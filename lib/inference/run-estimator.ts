/**
 * Learns how long a batch of `n` rows takes (dispatch to result, ms) from observed runs, so the
 * micro-batcher can close batches before a deadline and shed requests that cannot meet theirs.
 * One exponentially weighted average per power-of-two size bucket (1, 2, 4, … rows).
 */
export class RunEstimator {
  private readonly ms: (number | undefined)[] = [];

  /**
   * @param alpha weight of a new observation, in (0, 1]; default 0.2.
   */
  constructor(private readonly alpha = 0.2) {}

  private static bucket(rows: number): number {
    return Math.max(0, Math.ceil(Math.log2(Math.max(1, rows))));
  }

  /** Records that a batch of `rows` rows took `ms` milliseconds. */
  record(rows: number, ms: number): void {
    if (!Number.isFinite(ms) || ms < 0 || rows < 1) return;
    const b = RunEstimator.bucket(rows);
    const old = this.ms[b];
    this.ms[b] = old === undefined ? ms : old + this.alpha * (ms - old);
  }

  /** Whether any run has been observed. */
  get known(): boolean {
    return this.ms.some((v) => v !== undefined);
  }

  /**
   * Expected time of a batch of `rows` rows, ms; 0 when nothing has been observed yet. From a
   * smaller bucket it extrapolates linearly in rows (pessimistic: batching is sub-linear); from a
   * larger one it takes that bucket's time (also pessimistic).
   */
  estimate(rows: number): number {
    const b = RunEstimator.bucket(rows);
    const own = this.ms[b];
    if (own !== undefined) return own;
    for (let d = 1; d < this.ms.length + b; d++) {
      const lower = b - d >= 0 ? this.ms[b - d] : undefined;
      if (lower !== undefined) return lower * (Math.max(1, rows) / 2 ** (b - d));
      const upper = this.ms[b + d];
      if (upper !== undefined) return upper;
    }
    return 0;
  }
}

/** What {@link expectedWait} weighs: the rows queued, the new request's rows, the executor's concurrency, the largest batch, now. */
export interface WaitQuery {
  readonly queuedRows: number;
  readonly rows: number;
  readonly concurrency: number;
  readonly max: number;
  readonly now: number;
}

/**
 * Expected time until a new request of `q.rows` rows, arriving while every worker is busy, has its result, ms (0 while
 * nothing is known): what runs ends, then the rows ahead of it and its own share the workers in batches of `q.max`.
 */
export function expectedWait(
  estimator: RunEstimator,
  inflight: Iterable<{ readonly startedAt: number; readonly rows: number }>,
  q: WaitQuery,
): number {
  if (!estimator.known) return 0;
  let ahead = q.queuedRows;
  let seen = 0;
  let soonest = Number.POSITIVE_INFINITY;
  for (const b of inflight) {
    if (++seen > q.concurrency) ahead += b.rows; // handed over but not yet running
    soonest = Math.min(soonest, Math.max(0, b.startedAt + estimator.estimate(b.rows) - q.now));
  }
  // the first running batch's end counts only when every worker is busy
  const residual = seen >= q.concurrency && Number.isFinite(soonest) ? soonest : 0;
  const perWorker = Math.ceil((ahead + q.rows) / q.concurrency);
  const rounds = Math.ceil(perWorker / q.max);
  return residual + rounds * estimator.estimate(Math.min(q.max, perWorker));
}
