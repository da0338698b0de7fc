import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { combineDecisions } from '../../lib/escalation/combine';
import { EscalationPolicy } from '../../lib/escalation/policy';
import { ShareCap } from '../../lib/escalation/share-cap';
import type { Decision } from '../../lib/domain/decision';
import { FakeOpenAI } from '../support/openai-peer';
import { deep, escalatorFor, event, localResult } from './support/escalator';
import { FakeClock } from '../support/clock';

describe('ShareCap (property)', () => {
  const op = fc.record({ dt: fc.integer({ min: 0, max: 5_000 }), candidate: fc.boolean() });

  it('at every admission, admitted ≤ max(burst, maxShare × total) over the window; a refusal means the next would exceed it', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1_000, max: 120_000 }),
        fc.array(op, { maxLength: 400 }),
        (maxShare, burst, windowMs, ops) => {
          const clock = new FakeClock(0);
          const cap = new ShareCap({ maxShare, windowMs, burst, now: clock.now });
          for (const o of ops) {
            clock.advance(o.dt);
            if (!o.candidate) {
              cap.record();
              continue;
            }
            const before = cap.snapshot();
            const ok = cap.tryAdmit();
            const after = cap.snapshot();
            const limit = Math.max(burst, maxShare * after.total);
            assert.equal(after.total, before.total + 1);
            if (ok) {
              assert.equal(after.admitted, before.admitted + 1);
              assert.ok(after.admitted <= limit + 1e-9, `${after.admitted} admitted > ${limit}`);
            } else {
              assert.equal(after.admitted, before.admitted);
              assert.ok(after.admitted + 1 > limit - 1e-9, 'refused although under the cap');
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('forgets everything one window after the last item', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 200 }), (candidates) => {
        const clock = new FakeClock(0);
        const cap = new ShareCap({ maxShare: 0.05, windowMs: 60_000, burst: 1, now: clock.now });
        for (const c of candidates) {
          if (c) cap.tryAdmit();
          else cap.record();
          clock.advance(10);
        }
        clock.advance(60_000 + 3_000); // one bucket (3 s) of slack: the window slides a bucket at a time
        assert.deepEqual(cap.snapshot(), { total: 0, admitted: 0 });
      }),
    );
  });
});

describe('EscalationPolicy', () => {
  const policy = (band?: { low: number; high: number }) =>
    new EscalationPolicy({ noteMinChars: 200, band, maxShare: 1, windowMs: 60_000, burst: 1, now: () => 0 });

  it('triggers on the review band (default: the manifest thresholds), a long note, and analysis deep', () => {
    const p = policy();
    assert.deepEqual(p.triggers(event(), localResult({ decision: 'approve' })), []);
    assert.deepEqual(p.triggers(event(), localResult({ decision: 'review' })), ['band']);
    assert.deepEqual(p.triggers(event(), localResult({ decision: 'decline' })), []);
    assert.deepEqual(p.triggers(event({ note: 'x'.repeat(199) }), localResult()), []);
    assert.deepEqual(p.triggers(event({ note: 'x'.repeat(200) }), localResult()), ['note']);
    assert.deepEqual(p.triggers(deep({ note: 'x'.repeat(200) }), localResult({ decision: 'review' })), [
      'band',
      'note',
      'requested',
    ]);
  });

  it('a configured band [low, high) replaces the thresholds', () => {
    const p = policy({ low: 0.3, high: 0.4 });
    assert.deepEqual(p.triggers(event(), localResult({ score: 0.3, decision: 'approve' })), ['band']);
    assert.deepEqual(p.triggers(event(), localResult({ score: 0.4, decision: 'review' })), []);
  });

  it('counts every payment, and explicit requests against the cap', () => {
    const clock = new FakeClock(0);
    const p = new EscalationPolicy({
      noteMinChars: 200,
      band: undefined,
      maxShare: 0.05,
      windowMs: 60_000,
      burst: 1,
      now: clock.now,
    });
    let admitted = 0;
    for (let i = 0; i < 1000; i++) {
      clock.advance(1);
      const requested = i % 10 === 0; // 10 % ask for deep analysis
      if (p.decide(requested ? deep() : event(), localResult()).escalate) admitted++;
    }
    assert.deepEqual(p.window(), { total: 1000, admitted });
    // the last request is payment 991: at most 5 % of 991 = 49.55 → 49 (the first went through on the burst)
    assert.equal(admitted, 49);
  });
});

describe('combination rule', () => {
  it('the stricter decision wins (property)', () => {
    const rank: Record<Decision, number> = { approve: 0, review: 1, decline: 2 };
    const d = fc.constantFrom<Decision>('approve', 'review', 'decline');
    fc.assert(
      fc.property(d, d, (local, llm) => {
        const c = combineDecisions(local, llm);
        assert.equal(rank[c], Math.max(rank[local], rank[llm]));
      }),
    );
  });
});

describe('the share cap holds over many requests through the real client', () => {
  let fake: FakeOpenAI;
  before(async () => (fake = await FakeOpenAI.create()));
  after(() => fake.close());

  it('2000 payments, 20 % asking for deep analysis, cap 5 %: at most 5 % (+ burst) reach the server', async () => {
    const clock = new FakeClock(0);
    const { escalator, events } = escalatorFor(fake, { ESCALATION_MAX_SHARE: '0.05' }, { now: clock.now });
    const results = [];
    for (let i = 0; i < 2000; i++) {
      clock.advance(10); // 100 payments/s: 20 s, inside one 60 s window
      results.push(await escalator.review(i % 5 === 0 ? deep() : event(), localResult()));
    }
    const escalated = results.filter((r) => r.escalation?.outcome === 'ok').length;
    const capped = results.filter((r) => r.escalation?.outcome === 'capped');
    assert.equal(fake.count, escalated);
    assert.ok(escalated <= 0.05 * 2000 + 1, `${escalated} escalated`);
    assert.ok(escalated >= 0.05 * 2000 - 1, `the cap is not stricter than configured: ${escalated}`);
    assert.equal(escalated + capped.length, 400);
    for (const r of capped) assert.equal(r.source, 'local');
    assert.equal(events.escalated.length, 400);
  });
});
