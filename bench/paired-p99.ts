/**
 * A/B comparison of p99 latency at one offered rate, on a noisy machine: the two arms run in alternating
 * rounds (A then B, then B then A, ...), each round's ratio is B's p99 over A's p99 in that round (the two runs
 * are adjacent in time, so slow drifts of the machine hit both), and the figure is the median of those ratios,
 * reported with every round's ratio.
 */
import { medianOf, spreadOf, type RunFigures, type Spread } from './load';

/** What {@link pairedP99} measured. */
export interface PairedP99 {
  /** Arm A over the rounds (medians, with ranges). */
  readonly a: RunFigures;
  /** Arm B over the rounds. */
  readonly b: RunFigures;
  /** Median over rounds of B's p99 ÷ A's p99 in the same round. */
  readonly p99_ratio: number;
  /** Each round's ratio, with their median, min and max. */
  readonly p99_ratio_rounds: Spread;
}

/**
 * Runs `rounds` rounds of both arms, alternating which goes first.
 * @param run one measured run of an arm at the offered rate.
 * @param log called after each run.
 */
export async function pairedP99(
  rounds: number,
  run: (arm: 'a' | 'b') => Promise<RunFigures>,
  log: (arm: 'a' | 'b', round: number, f: RunFigures) => void = () => undefined,
): Promise<PairedP99> {
  const a: RunFigures[] = [];
  const b: RunFigures[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const got: Partial<Record<'a' | 'b', RunFigures>> = {};
    for (const arm of r % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
      const f = await run(arm);
      got[arm] = f;
      log(arm, r + 1, f);
    }
    const fa = got.a as RunFigures;
    const fb = got.b as RunFigures;
    a.push(fa);
    b.push(fb);
    ratios.push(fb.p99_ms / Math.max(fa.p99_ms, 1e-9));
  }
  const spread = spreadOf(ratios);
  return { a: medianOf(a), b: medianOf(b), p99_ratio: spread.median, p99_ratio_rounds: spread };
}
