/**
 * The shadow of a candidate signals version (docs/signals.md "Rollout"): for its shadow share of payments, the
 * candidate's signals are computed beside the active version's, off the decision, and summed here, so that a lead
 * sees a new aggregate's or feature's distribution, and how a changed one differs, before any rule or model reads it.
 * Bounded: one running sum per signal name; reset when the candidate changes.
 */
import type { CompiledSignals } from './compiled-signals';

/** The shadow figures of one candidate signal. */
export interface ShadowSignal {
  readonly name: string;
  readonly n: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  /** Mean |candidate − active| over the shadowed payments, for a name the active version also computes. */
  readonly meanAbsDiff?: number;
}

/** The shadow report of a candidate against the active version. */
export interface SignalsShadowReport {
  readonly active: string;
  readonly candidate: string;
  readonly payments: number;
  readonly signals: readonly ShadowSignal[];
}

interface Sums {
  n: number;
  sum: number;
  min: number;
  max: number;
  diff: number;
  compared: number;
}

const r6 = (v: number): number => Math.round(v * 1e6) / 1e6;

/** Running sums of the candidate's signals beside the active's (one recorder per instance). */
export class SignalsShadow {
  private key: string | undefined;
  private payments = 0;
  private sums: Sums[] = [];
  private activeIndex: (number | undefined)[] = [];
  private candidate: CompiledSignals | undefined;
  private active: CompiledSignals | undefined;

  /** Adds one shadowed payment: both versions' rows (in each version's `names` order). */
  record(
    active: CompiledSignals,
    activeRow: Float64Array,
    candidate: CompiledSignals,
    candidateRow: Float64Array,
  ): void {
    const key = `${active.version}\u0000${candidate.version}`;
    if (key !== this.key) this.reset(key, active, candidate);
    this.payments++;
    for (let i = 0; i < this.sums.length; i++) {
      const v = candidateRow[i] ?? 0;
      const s = this.sums[i] as Sums;
      s.n++;
      s.sum += v;
      if (v < s.min) s.min = v;
      if (v > s.max) s.max = v;
      const a = this.activeIndex[i];
      if (a !== undefined) {
        s.diff += Math.abs(v - (activeRow[a] ?? 0));
        s.compared++;
      }
    }
  }

  /** The report, or `undefined` before any shadowed payment. */
  report(): SignalsShadowReport | undefined {
    const { candidate, active } = this;
    if (candidate === undefined || active === undefined || this.payments === 0) return undefined;
    return {
      active: active.version,
      candidate: candidate.version,
      payments: this.payments,
      signals: this.sums.map((s, i) => ({
        name: candidate.names[i] as string,
        n: s.n,
        mean: r6(s.sum / s.n),
        min: s.min,
        max: s.max,
        ...(s.compared === 0 ? {} : { meanAbsDiff: r6(s.diff / s.compared) }),
      })),
    };
  }

  private reset(key: string, active: CompiledSignals, candidate: CompiledSignals): void {
    this.key = key;
    this.active = active;
    this.candidate = candidate;
    this.payments = 0;
    this.sums = candidate.names.map(() => ({ n: 0, sum: 0, min: Infinity, max: -Infinity, diff: 0, compared: 0 }));
    this.activeIndex = candidate.names.map((name) => active.indexOf(name));
  }
}
