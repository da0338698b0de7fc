/**
 * The micro-batcher refuses only what inference itself cannot meet (property, fast-check). A simulated
 * executor with known run times (`a + b × rows` ms, `c` units), an injected clock, and a simulated
 * event-loop delay between a request's arrival at the engine and its arrival at the batcher.
 *
 * Inference deadline of a request: `max(deadline, reachedBatcher + budget)` (budget = deadline −
 * arrival at the engine): the loop's lateness is forgiven. Both directions, with a tolerance of
 * `TOLERANCE(a, b, max)` = one batch of the largest size, `a + b × max` ms (the estimator learns one
 * run time per power-of-two size bucket, and a batch's place among the units is predicted, not known):
 *
 * - nothing admitted that cannot: every request the batcher accepts is answered by its inference
 *   deadline + tolerance;
 * - nothing shed that would have met its deadline: for every request it refuses, the same run with
 *   that request forced in (no deadline) answers it later than its inference deadline − tolerance.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MicroBatcher } from '../../lib/inference/micro-batcher';
import { row } from './support/fake-executor';
import { FakeTimers, settle } from '../support/clock';
import { TimedExecutor } from './support/timed-executor';

interface Arrival {
  /** Arrival at the engine, ms after the scenario starts. */
  readonly at: number;
  /** Simulated event-loop delay before it reaches the batcher, ms. */
  readonly loopMs: number;
  readonly rows: number;
  readonly budgetMs: number;
}

interface Setup {
  readonly a: number;
  readonly b: number;
  readonly concurrency: number;
  readonly maxBatchSize: number;
  readonly windowMs: number;
}

interface Outcome {
  readonly reached: number;
  readonly due: number;
  readonly answeredAt?: number;
  readonly refused?: string;
}

const tolerance = (s: Setup): number => s.a + s.b * s.maxBatchSize;

/** Runs the scenario; `forced` (an index) is sent without a deadline. */
async function simulate(s: Setup, arrivals: readonly Arrival[], forced?: number): Promise<Outcome[]> {
  const time = new FakeTimers();
  const ex = new TimedExecutor(time, s.concurrency, (n) => s.a + s.b * n);
  const batcher = new MicroBatcher({
    executor: ex,
    options: { maxBatchSize: s.maxBatchSize, windowMs: s.windowMs, queueMax: 1_000_000 },
    now: time.now,
    scheduler: time,
  });
  // Warm-up: the estimator learns every size bucket (1, 2, 4, ... rows), one batch at a time.
  for (let n = 1; n <= s.maxBatchSize; n *= 2) {
    const p = batcher.run(Float32Array.from({ length: n * 3 }), n);
    for (let i = 0; i < 1000 && ex.running > 0; i++) {
      time.advance(1);
      await settle();
    }
    await p;
  }
  const t0 = time.now();
  const order = arrivals
    .map((x, i) => ({ ...x, i, reach: t0 + x.at + x.loopMs }))
    .sort((p, q) => p.reach - q.reach || p.i - q.i);
  const outcomes: Outcome[] = new Array<Outcome>(arrivals.length);
  const pending: Promise<void>[] = [];
  let next = 0;
  for (let guard = 0; guard < 100_000; guard++) {
    while (next < order.length && (order[next]?.reach ?? Infinity) <= time.now()) {
      const x = order[next++];
      if (x === undefined) break;
      const arrivedAt = t0 + x.at;
      const deadline = arrivedAt + x.budgetMs;
      const reached = time.now();
      const due = Math.max(deadline, reached + x.budgetMs);
      const input = Float32Array.from(Array.from({ length: x.rows }, () => [...row(x.i + 1)]).flat());
      const run = batcher.run(input, x.rows, x.i === forced ? {} : { arrivedAt, deadline });
      pending.push(
        run.then(
          () => void (outcomes[x.i] = { reached, due, answeredAt: time.now() }),
          (e: { code: string }) => void (outcomes[x.i] = { reached, due, refused: e.code }),
        ),
      );
    }
    await settle();
    if (next >= order.length && outcomes.filter(Boolean).length === arrivals.length) break;
    time.advance(1);
  }
  await Promise.all(pending);
  assert.ok(ex.maxRunning <= s.concurrency);
  return outcomes;
}

const setup: fc.Arbitrary<Setup> = fc.record({
  a: fc.integer({ min: 1, max: 6 }),
  b: fc.integer({ min: 0, max: 2 }),
  concurrency: fc.integer({ min: 1, max: 3 }),
  maxBatchSize: fc.constantFrom(1, 2, 4, 8),
  windowMs: fc.integer({ min: 0, max: 5 }),
});

const arrival: fc.Arbitrary<Arrival> = fc.record({
  at: fc.integer({ min: 0, max: 60 }),
  loopMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 80 })),
  rows: fc.integer({ min: 1, max: 6 }),
  budgetMs: fc.integer({ min: 5, max: 60 }),
});

describe('MicroBatcher deadlines (property: simulated executor, clock and event-loop delay)', () => {
  it('admits nothing that cannot meet its inference deadline, and sheds nothing that would have met it', async () => {
    await fc.assert(
      fc.asyncProperty(setup, fc.array(arrival, { minLength: 1, maxLength: 30 }), async (s, arrivals) => {
        const tol = tolerance(s);
        const outcomes = await simulate(s, arrivals);
        for (const [i, o] of outcomes.entries()) {
          if (o.refused === undefined) {
            const late = (o.answeredAt ?? Infinity) - o.due;
            assert.ok(late <= tol, `request ${i} admitted but answered ${late} ms past its inference deadline`);
          } else {
            assert.equal(o.refused, 'deadline_exceeded');
            const alt = (await simulate(s, arrivals, i))[i];
            const slack = (alt?.answeredAt ?? Infinity) - o.due;
            assert.ok(slack > -tol, `request ${i} refused, but forced in it was answered ${-slack} ms early`);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('runs a request that is late only because of the event loop when inference has room', async () => {
    await fc.assert(
      fc.asyncProperty(
        setup,
        fc.integer({ min: 61, max: 500 }),
        fc.integer({ min: 10, max: 60 }),
        async (s, loopMs, budgetMs) => {
          fc.pre(s.a + s.b * 1 <= budgetMs);
          // alone, and past its deadline by the time the loop brings it: it still runs
          const [o] = await simulate(s, [{ at: 0, loopMs, rows: 1, budgetMs }]);
          assert.equal(o?.refused, undefined);
          assert.ok((o?.answeredAt ?? Infinity) <= (o?.due ?? 0));
        },
      ),
      { numRuns: 40 },
    );
  });
});
