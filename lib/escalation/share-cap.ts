/** Options of a {@link ShareCap}. */
export interface ShareCapOptions {
  /** Largest share of admitted items over the window, in [0, 1]. */
  readonly maxShare: number;
  /** Sliding window length, ms. */
  readonly windowMs: number;
  /** Admissions allowed in a window even when the share would be exceeded (0 = strict share). */
  readonly burst: number;
  /** Buckets the window is split into (the window slides one bucket at a time); default 20. */
  readonly buckets?: number;
  /** Monotonic clock, ms. Default `performance.now`. */
  readonly now?: () => number;
}

/**
 * Caps the share of items admitted over a sliding window. Every item is {@link record}ed; a candidate is
 * {@link tryAdmit}ted only if, counting it, the admitted count in the window stays at most
 * `max(burst, maxShare × total)`. Memory is bounded: a fixed ring of buckets.
 */
export class ShareCap {
  private readonly bucketMs: number;
  private readonly totals: Float64Array;
  private readonly admitted: Float64Array;
  private readonly now: () => number;
  /** Absolute number of the newest bucket (time / bucket length); undefined before the first item. */
  private head: number | undefined;
  private total = 0;
  private taken = 0;

  constructor(private readonly options: ShareCapOptions) {
    const n = options.buckets ?? 20;
    this.bucketMs = options.windowMs / n;
    this.totals = new Float64Array(n);
    this.admitted = new Float64Array(n);
    this.now = options.now ?? (() => performance.now());
  }

  /** Counts one item that is not a candidate. */
  record(): void {
    const i = this.slot();
    this.totals[i] = (this.totals[i] ?? 0) + 1;
    this.total++;
  }

  /** Counts one candidate; returns whether it is admitted under the cap. */
  tryAdmit(): boolean {
    const i = this.slot();
    this.totals[i] = (this.totals[i] ?? 0) + 1;
    this.total++;
    const ok = this.taken + 1 <= Math.max(this.options.burst, this.options.maxShare * this.total);
    if (ok) {
      this.admitted[i] = (this.admitted[i] ?? 0) + 1;
      this.taken++;
    }
    return ok;
  }

  /** Items and admissions currently in the window. */
  snapshot(): { readonly total: number; readonly admitted: number } {
    this.slot();
    return { total: this.total, admitted: this.taken };
  }

  /** Advances the ring to now, dropping buckets that left the window; returns the current bucket's index. */
  private slot(): number {
    const n = this.totals.length;
    const abs = Math.floor(this.now() / this.bucketMs);
    if (this.head === undefined) this.head = abs;
    else if (abs > this.head) {
      const drop = Math.min(n, abs - this.head);
      for (let k = 1; k <= drop; k++) {
        const j = mod(this.head + k, n);
        this.total -= this.totals[j] ?? 0;
        this.taken -= this.admitted[j] ?? 0;
        this.totals[j] = 0;
        this.admitted[j] = 0;
      }
      this.head = abs;
    }
    return mod(this.head, n);
  }
}

const mod = (a: number, n: number): number => ((a % n) + n) % n;
