import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as fc from 'fast-check';
import {
  chooseThresholds,
  computeStandardization,
  metricsAt,
  predictLogistic,
  rocAuc,
  trainLogistic,
} from '../../lib/training/train';
import { Prng } from '../../lib/training/prng';

/** O(n²) definition: P(score⁺ > score⁻) + ½ P(tie). */
function bruteAuc(s: readonly number[], y: readonly number[]): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < s.length; i++) {
    for (let j = 0; j < s.length; j++) {
      if (y[i] !== 1 || y[j] !== 0) continue;
      den++;
      num += (s[i] as number) > (s[j] as number) ? 1 : s[i] === s[j] ? 0.5 : 0;
    }
  }
  return num / den;
}

/** Scores (small integers, so ties happen) with labels containing both classes. */
const scored = fc
  .array(fc.tuple(fc.integer({ min: -50, max: 50 }), fc.integer({ min: 0, max: 1 })), { minLength: 2, maxLength: 60 })
  .filter((rows) => rows.some(([, y]) => y === 1) && rows.some(([, y]) => y === 0));
const split = (rows: readonly (readonly [number, number])[]): [number[], number[]] => [
  rows.map((r) => r[0]),
  rows.map((r) => r[1]),
];

describe('rocAuc', () => {
  it('equals the pairwise definition (ties count ½) and lies in [0, 1]', () => {
    fc.assert(
      fc.property(scored, (rows) => {
        const [s, y] = split(rows);
        const auc = rocAuc(s, y);
        assert.ok(auc >= 0 && auc <= 1);
        assert.ok(Math.abs(auc - bruteAuc(s, y)) < 1e-12);
      }),
    );
  });

  it('is 1 for perfectly separated scores', () => {
    const neg = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 });
    const pos = fc.array(fc.double({ min: 2, max: 3, noNaN: true }), { minLength: 1, maxLength: 40 });
    fc.assert(
      fc.property(neg, pos, (n, p) => {
        assert.equal(rocAuc([...n, ...p], [...n.map(() => 0), ...p.map(() => 1)]), 1);
        assert.equal(rocAuc([...p, ...n], [...p.map(() => 0), ...n.map(() => 1)]), 0);
      }),
    );
  });

  it('is invariant under a strictly increasing transform', () => {
    fc.assert(
      fc.property(scored, (rows) => {
        const [s, y] = split(rows);
        assert.equal(
          rocAuc(
            s.map((v) => v * v * v + 5 * v - 7),
            y,
          ),
          rocAuc(s, y),
        );
      }),
    );
  });

  it('satisfies AUC(s) + AUC(-s) = 1 without ties', () => {
    const rows = fc
      .uniqueArray(fc.integer({ min: -1000, max: 1000 }), { minLength: 2, maxLength: 60 })
      .chain((s) =>
        fc.tuple(
          fc.constant(s),
          fc.array(fc.integer({ min: 0, max: 1 }), { minLength: s.length, maxLength: s.length }),
        ),
      )
      .filter(([, y]) => y.includes(0) && y.includes(1));
    fc.assert(
      fc.property(rows, ([s, y]) => {
        assert.ok(
          Math.abs(
            rocAuc(s, y) +
              rocAuc(
                s.map((v) => -v),
                y,
              ) -
              1,
          ) < 1e-12,
        );
      }),
    );
  });

  it('is NaN with a single class', () => {
    assert.ok(Number.isNaN(rocAuc([0.1, 0.2], [1, 1])));
    assert.ok(Number.isNaN(rocAuc([0.1, 0.2], [0, 0])));
  });
});

describe('metricsAt / chooseThresholds', () => {
  it('computes precision, recall and flagged share', () => {
    const m = metricsAt([0.9, 0.8, 0.3, 0.2], [1, 0, 1, 0], 0.5);
    assert.deepEqual(m, { threshold: 0.5, precision: 0.5, recall: 0.5, flaggedRate: 0.5 });
  });

  it('returns 0 < review < decline < 1 with review recall ≥ the target', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), (seed) => {
        const rng = new Prng(seed);
        const y = Array.from({ length: 400 }, () => (rng.chance(0.1) ? 1 : 0));
        const s = y.map((v) => 1 / (1 + Math.exp(-rng.normal(v * 2.5 - 3, 1))));
        const t = chooseThresholds(s, y, { reviewRecall: 0.8, minDeclinePositives: 3 });
        assert.ok(t.review > 0 && t.review < t.decline && t.decline < 1, JSON.stringify(t));
        assert.ok(metricsAt(s, y, t.review).recall >= 0.8);
      }),
      { numRuns: 50 },
    );
  });
});

describe('trainLogistic', () => {
  const rng = new Prng(7);
  const n = 4000;
  const d = 3;
  const x = new Float64Array(n * d);
  const y = new Uint8Array(n);
  for (let r = 0; r < n; r++) {
    const a = rng.normal(10, 5);
    const b = rng.normal(0, 0.01);
    x.set([a, b, 3], r * d); // third column constant
    y[r] = rng.chance(1 / (1 + Math.exp(-(0.4 * (a - 10) + 300 * b - 1)))) ? 1 : 0;
  }

  it('standardises with population mean/std and keeps constant columns at std 1', () => {
    const { mean, std } = computeStandardization(Float64Array.of(1, 5, 3, 5), 2, 2);
    assert.deepEqual(Array.from(mean), [2, 5]);
    assert.deepEqual(Array.from(std), [1, 1]);
  });

  it('learns the signs of the true coefficients, reports progress, and is deterministic', () => {
    const epochs: number[] = [];
    const m = trainLogistic(x, y, n, d, { epochs: 5, learningRate: 0.05, onEpoch: (p) => epochs.push(p.epoch) });
    assert.deepEqual(epochs, [1, 2, 3, 4, 5]);
    assert.ok((m.weights[0] as number) > 0.5 && (m.weights[1] as number) > 0.5);
    assert.ok(Math.abs(m.weights[2] as number) < 1e-9);
    assert.ok(rocAuc(predictLogistic(m, x, n), y) > 0.8);
    const again = trainLogistic(x, y, n, d, { epochs: 5, learningRate: 0.05 });
    assert.deepEqual(Array.from(again.weights), Array.from(m.weights));
    assert.equal(again.bias, m.bias);
  });
});
