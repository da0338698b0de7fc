import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decide, invalidScoreKind, isValidScore } from '../../lib/scoring/decision';

/** Ordered thresholds 0 ≤ review ≤ decline ≤ 1, as a manifest carries them. */
const thresholds = fc
  .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }))
  .map(([a, b]) => ({ review: Math.min(a, b), decline: Math.max(a, b) }));

/** Any double, including NaN, ±Infinity, −0 and values far outside [0, 1]. */
const anyNumber = fc.oneof(
  fc.double(),
  fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 1 + Number.EPSILON, -Number.MIN_VALUE),
);
const invalid = anyNumber.filter((s) => !(Number.isFinite(s) && s >= 0 && s <= 1));

describe('decide (fail closed)', () => {
  it('never approves, and never declines, a score that is not a finite number in [0, 1]', () => {
    fc.assert(
      fc.property(invalid, thresholds, (score, t) => {
        assert.equal(isValidScore(score), false);
        assert.equal(decide(score, t), 'review');
      }),
    );
  });

  it('approves exactly the valid scores below the review threshold', () => {
    fc.assert(
      fc.property(anyNumber, thresholds, (score, t) => {
        assert.equal(decide(score, t) === 'approve', isValidScore(score) && score < t.review);
      }),
    );
  });

  it('follows the thresholds for valid scores: decline ≥ decline, review in between', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), thresholds, (score, t) => {
        const expected = score >= t.decline ? 'decline' : score >= t.review ? 'review' : 'approve';
        assert.equal(decide(score, t), expected);
      }),
    );
  });

  it('is monotonic on [0, 1]: a higher score never gets a milder decision', () => {
    const rank = { approve: 0, review: 1, decline: 2 } as const;
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        thresholds,
        (a, b, t) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          assert.ok(rank[decide(lo, t)] <= rank[decide(hi, t)]);
        },
      ),
    );
  });

  it('never approves when a threshold is NaN (a broken manifest fails closed too)', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), (score) => {
        assert.notEqual(decide(score, { review: Number.NaN, decline: Number.NaN }), 'approve');
        assert.notEqual(decide(score, { review: Number.NaN, decline: 0.9 }), 'approve');
      }),
    );
  });

  it('names what is wrong with an invalid score', () => {
    assert.equal(invalidScoreKind(undefined), 'missing');
    assert.equal(invalidScoreKind(Number.NaN), 'nan');
    assert.equal(invalidScoreKind(Infinity), 'infinite');
    assert.equal(invalidScoreKind(-Infinity), 'infinite');
    assert.equal(invalidScoreKind(1.5), 'out_of_range');
    assert.equal(invalidScoreKind(-0.1), 'out_of_range');
    assert.equal(invalidScoreKind(0), undefined);
    assert.equal(invalidScoreKind(1), undefined);
  });
});
