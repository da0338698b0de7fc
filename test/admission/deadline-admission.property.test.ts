/**
 * Admission by deadline, pure logic on an injected clock. Under any arrival pattern (requests with any
 * deadline and any time already spent since they reached the app, deliveries without a deadline, answers in
 * any order, time passing), a request is refused only if the backlog ahead of it, at the measured rate,
 * exceeds what is left of its deadline, and admitted whenever it does not (or while no rate is measured, or
 * fewer than the floor are inside);
 * a refusal's `Retry-After` is the backlog's drain time. The measured rate is the rate at which work is
 * finished, and answers after a deadline are counted as late. The estimate is robust: a cold instance
 * refuses nothing, one slow window among fast ones refuses nothing the fast rate would not, and a sustained
 * slowdown does refuse.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DeadlineAdmission, type DeadlineTicket } from '../../lib/admission/deadline-admission';
import { FakeClock } from '../support/clock';

type Op =
  | { kind: 'arrive'; deadlineMs: number; spentMs: number }
  | { kind: 'delivery'; weight: number }
  | { kind: 'answer'; which: number; served: boolean }
  | { kind: 'advance'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('arrive' as const),
      deadlineMs: fc.integer({ min: 1, max: 2000 }),
      spentMs: fc.integer({ min: 0, max: 100 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('delivery' as const), weight: fc.integer({ min: 1, max: 32 }) }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('answer' as const), which: fc.nat(), served: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.double({ min: 0, max: 60, noNaN: true }) }),
  },
);

/**
 * A queue kept at `backlog` units inside (work without a deadline, so the simulation itself is never
 * refused) whose server finishes `perWindow[k]` units in window k of `windowMs`: at each window's start
 * that many leave and as many enter. Calls `probe` after each window's answers.
 */
function serve(
  admission: DeadlineAdmission,
  clock: { t: number },
  backlog: number,
  windowMs: number,
  perWindow: readonly number[],
  probe: (k: number) => void = () => undefined,
): void {
  const inside = Array.from({ length: backlog }, () => admission.enterWithoutDeadline());
  perWindow.forEach((n, k) => {
    clock.t += windowMs;
    for (let i = 0; i < n; i++) {
      inside.shift()?.release();
      inside.push(admission.enterWithoutDeadline());
    }
    probe(k);
  });
}

/** Asks for one request with `deadlineMs`; an admitted one leaves at once, unserved (its answer is no sample). */
function probe(admission: DeadlineAdmission, deadlineMs: number): boolean {
  const d = admission.tryAdmit(deadlineMs);
  if (d.admitted) d.ticket.release(false);
  return d.admitted;
}

describe('DeadlineAdmission (property)', () => {
  it('refuses a request only if the backlog ahead, at the measured rate, exceeds its remaining deadline; admits otherwise', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 400 }),
        fc.integer({ min: 10, max: 200 }),
        fc.integer({ min: 1, max: 8 }),
        (ops, windowMs, minBacklog) => {
          const clock = new FakeClock(1000);
          const admission = new DeadlineAdmission({ windowMs, minBacklog }, clock.now);
          const held: { ticket: DeadlineTicket; weight: number }[] = [];
          const backlog = (): number => held.reduce((n, h) => n + h.weight, 0);
          for (const o of ops) {
            if (o.kind === 'advance') clock.advance(o.ms);
            else if (o.kind === 'delivery')
              held.push({ ticket: admission.enterWithoutDeadline(o.weight), weight: o.weight });
            else if (o.kind === 'answer') {
              const [h] = held.splice(o.which % Math.max(1, held.length), 1);
              h?.ticket.release(o.served);
            } else {
              const ahead = backlog();
              const remaining = o.deadlineMs - o.spentMs;
              const decision = admission.tryAdmit(o.deadlineMs, clock.now() - o.spentMs);
              const rate = admission.rate; // the rate the decision used (nothing has moved the clock since)
              if (decision.admitted) {
                assert.ok(
                  rate === undefined || ahead / rate <= remaining,
                  `admitted: ${ahead} ahead at ${rate}/ms, ${remaining} ms left`,
                );
                held.push({ ticket: decision.ticket, weight: 1 });
              } else {
                const r = decision.refusal;
                assert.ok(rate !== undefined, 'refused only with a measured rate');
                assert.equal(r.backlog, ahead, 'the backlog it compared is the work ahead');
                assert.equal(r.rate, rate);
                assert.ok(ahead / rate > remaining, `refused: ${ahead} ahead at ${rate}/ms, ${remaining} ms left`);
                assert.ok(ahead >= minBacklog, `refused with ${ahead} inside, below the floor ${minBacklog}`);
                assert.equal(r.retryAfterSec, Math.min(30, Math.max(1, Math.ceil(ahead / rate / 1000))));
              }
            }
            assert.equal(admission.backlog, backlog(), 'its backlog is the work admitted and not answered');
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('measures the rate at which a queue drains: with K inside and one answer every `gap` ms, 1/gap per ms', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 50 }), fc.double({ min: 0.5, max: 10, noNaN: true }), (k, gap) => {
        const clock = new FakeClock(0);
        const admission = new DeadlineAdmission({ windowMs: 100 }, clock.now);
        const inside: DeadlineTicket[] = [];
        const admit = (): void => {
          const d = admission.tryAdmit(1e9);
          assert.ok(d.admitted);
          inside.push(d.ticket);
        };
        for (let i = 0; i < k; i++) admit();
        assert.equal(admission.rate, undefined, 'nothing measured yet: when unsure, admit');
        while (clock.now() < 5000) {
          clock.advance(gap);
          inside.shift()?.release();
          admit(); // a closed loop: K inside
        }
        const rate = admission.rate;
        assert.ok(rate !== undefined);
        assert.ok(Math.abs(rate * gap - 1) < 0.15, `measured ${rate}/ms, served ${1 / gap}/ms`);
      }),
      { numRuns: 100 },
    );
  });

  it('does not measure a backlog draining into a sliver of an idle window', () => {
    const clock = new FakeClock(0);
    const admission = new DeadlineAdmission({ windowMs: 100 }, clock.now);
    const admit = (): DeadlineTicket => {
      const d = admission.tryAdmit(1e9);
      assert.ok(d.admitted);
      return d.ticket;
    };
    const inside = Array.from({ length: 50 }, admit);
    clock.t = 100;
    inside.push(admit()); // closes the first window: work inside, nothing answered yet
    clock.t = 101;
    for (const ticket of inside) ticket.release(); // 51 answers within 1 ms of busy time
    clock.t = 300; // idle until the next event closes the window
    admit();
    assert.equal(admission.rate, undefined, 'not 51 per ms: the window was busy 1 ms of 200');
  });

  it('does not measure a lone request: its latency is not the rate a backlog drains at', () => {
    const clock = new FakeClock(0);
    const admission = new DeadlineAdmission({ windowMs: 100 }, clock.now);
    for (let i = 0; i < 100; i++) {
      const d = admission.tryAdmit(50);
      assert.ok(d.admitted);
      clock.advance(40);
      d.ticket.release();
      clock.advance(10);
    }
    assert.equal(admission.rate, undefined);
  });

  it('forgets a rate its own refusals keep from being measured again: after staleMs it admits (when unsure, admit)', () => {
    const clock = new FakeClock(0);
    const admission = new DeadlineAdmission({ windowMs: 100, staleMs: 1000 }, clock.now);
    const inside: { release(): boolean }[] = [];
    for (let i = 0; i < 4; i++) {
      const d = admission.tryAdmit(1e9);
      assert.ok(d.admitted);
      inside.push(d.ticket);
    }
    while (clock.now() < 1000) {
      clock.advance(50); // one answer per 50 ms, 4 inside: 0.02 per ms
      inside.shift()?.release();
      const d = admission.tryAdmit(1e9);
      assert.ok(d.admitted);
      inside.push(d.ticket);
    }
    assert.ok(admission.rate !== undefined);
    // nothing is answered any more; requests with 10 ms deadlines are refused (4 ahead take 200 ms)
    let refusedUntil = clock.now();
    while (clock.now() < 1500) {
      clock.advance(5);
      const d = admission.tryAdmit(10);
      assert.equal(d.admitted, false, `refused at ${clock.now()} ms`);
      refusedUntil = clock.now();
    }
    clock.t = refusedUntil + 1000; // the refusal-dominated windows are no samples; the rate goes stale
    const d = admission.tryAdmit(10);
    assert.equal(admission.rate, undefined, 'forgotten');
    assert.ok(d.admitted, 'admitted: nothing measures the rate now');
  });

  it('a cold instance refuses nothing: no rate before minSamples windows were sampled, whatever the load', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 400 }),
        fc.integer({ min: 10, max: 200 }),
        fc.integer({ min: 1, max: 5 }),
        (ops, windowMs, minSamples) => {
          const clock = { t: 0 };
          const admission = new DeadlineAdmission({ windowMs, minSamples, samples: 5 }, () => clock.t);
          const held: DeadlineTicket[] = [];
          for (const o of ops) {
            if (o.kind === 'advance') clock.t += o.ms;
            else if (o.kind === 'delivery') held.push(admission.enterWithoutDeadline(o.weight));
            else if (o.kind === 'answer') held.splice(o.which % Math.max(1, held.length), 1)[0]?.release(o.served);
            else {
              const d = admission.tryAdmit(o.deadlineMs, clock.t - o.spentMs);
              // at most one window closes per windowMs: fewer than minSamples can have closed before this
              if (clock.t < minSamples * windowMs) assert.ok(d.admitted, `refused at ${clock.t} ms, cold`);
              if (d.admitted) held.push(d.ticket);
            }
            if (clock.t < minSamples * windowMs) assert.equal(admission.rate, undefined);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('one slow window among fast ones refuses nothing the fast rate would not', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 16, max: 400 }), // units inside
        fc.integer({ min: 2, max: 200 }), // answers per fast window
        fc.integer({ min: 0, max: 199 }), // answers in the slow window (fewer than a fast one)
        fc.integer({ min: 3, max: 12 }), // fast windows before it
        fc.integer({ min: 1, max: 12 }), // fast windows after it (the first closes the slow one's sample)
        fc.double({ min: 1, max: 3, noNaN: true }), // probe deadline ÷ the fast drain time
        (backlog, fast, slowIn, before, afterSlow, slack) => {
          const slow = Math.min(slowIn, fast - 1);
          const windowMs = 100;
          const clock = { t: 0 };
          const admission = new DeadlineAdmission({ windowMs, minBacklog: 1 }, () => clock.t);
          const fastRate = fast / windowMs;
          const perWindow = [...Array<number>(before).fill(fast), slow, ...Array<number>(afterSlow).fill(fast)];
          // a deadline the fast rate meets: the backlog drains in backlog ÷ fastRate
          const deadlineMs = (backlog / fastRate) * slack + 1;
          serve(admission, clock, backlog, windowMs, perWindow, () => {
            assert.ok(probe(admission, deadlineMs), `refused at ${clock.t} ms (rate ${admission.rate})`);
            const rate = admission.rate;
            assert.ok(rate === undefined || rate >= fastRate - 1e-9, `rate ${rate} < fast ${fastRate}`);
          });
          assert.equal(admission.stats.refused, 0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a sustained slowdown refuses: once `samples` windows in a row are slow, what cannot finish in time is refused', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 16, max: 400 }),
        fc.integer({ min: 20, max: 200 }),
        fc.integer({ min: 2, max: 10 }), // slowdown factor
        fc.integer({ min: 1, max: 5 }), // samples
        (backlog, fast, factor, samples) => {
          const windowMs = 100;
          const clock = { t: 0 };
          const admission = new DeadlineAdmission({ windowMs, samples, minSamples: 1, minBacklog: 1 }, () => clock.t);
          const slow = Math.max(1, Math.floor(fast / factor));
          // met at the fast rate, missed at the slow one
          const deadlineMs =
            backlog / (fast / windowMs) + (backlog / (slow / windowMs) - backlog / (fast / windowMs)) / 2;
          serve(admission, clock, backlog, windowMs, [
            ...Array<number>(5).fill(fast),
            ...Array<number>(samples).fill(slow),
          ]);
          clock.t += windowMs; // the last slow window ends
          assert.ok(!probe(admission, deadlineMs), `admitted at rate ${admission.rate} (slow ${slow / windowMs})`);
          assert.ok(Math.abs((admission.rate ?? 0) - slow / windowMs) < 1e-9);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('counts a request served after its deadline as late, and a failed one never', () => {
    const clock = new FakeClock(0);
    const admission = new DeadlineAdmission({}, clock.now);
    const a = admission.tryAdmit(50, -10); // reached the app 10 ms ago: 40 ms left
    const b = admission.tryAdmit(50);
    const c = admission.tryAdmit(50);
    assert.ok(a.admitted && b.admitted && c.admitted);
    clock.t = 45;
    assert.equal(a.ticket.release(), true, 'served 5 ms past its deadline');
    assert.equal(b.ticket.release(), false, 'served in time');
    clock.t = 60;
    assert.equal(c.ticket.release(false), false, 'failed, not a late answer');
    assert.equal(admission.stats.late, 1);
  });
});
