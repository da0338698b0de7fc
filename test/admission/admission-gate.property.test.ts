/**
 * The admission gate, pure logic with an injected clock. Properties: the limit and the number of
 * requests inside stay bounded; a gate that sees no drops never refuses below its maximum (nothing is
 * shed that inference would have served); drops lower the limit, at most once per interval; and in a
 * simulated engine with a fixed inference capacity, the gate converges to admitting about what
 * inference serves within the deadline, refusing the rest at the door.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AdmissionGate, type AdmissionTicket } from '../../lib/admission/admission-gate';
import { AppError } from '../../lib/errors/errors';
import { FakeClock } from '../support/clock';

type Op = { kind: 'admit' } | { kind: 'release'; which: number; drop: boolean } | { kind: 'advance'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'admit' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('release' as const), which: fc.nat(), drop: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 250 }) }) },
);

const settings = fc
  .record({ maxLimit: fc.integer({ min: 1, max: 40 }), minLimit: fc.integer({ min: 1, max: 40 }) })
  .map((s) => ({ ...s, minLimit: Math.min(s.minLimit, s.maxLimit), intervalMs: 100 }));

describe('AdmissionGate (property)', () => {
  it('keeps the limit within [min, max] and never admits past it; counts add up', () => {
    fc.assert(
      fc.property(settings, fc.array(op, { maxLength: 300 }), (opts, ops) => {
        const clock = new FakeClock(0);
        const gate = new AdmissionGate(opts, clock.now);
        const held: AdmissionTicket[] = [];
        let released = 0;
        for (const o of ops) {
          if (o.kind === 'advance') clock.advance(o.ms);
          else if (o.kind === 'admit') {
            const before = gate.stats;
            const ticket = gate.tryAdmit();
            if (ticket === undefined) assert.ok(before.inflight >= gate.limit, 'refused only when full');
            else {
              assert.equal(ticket.at, clock.now());
              held.push(ticket);
            }
          } else if (held.length > 0) {
            const [ticket] = held.splice(o.which % held.length, 1);
            ticket?.release(o.drop ? 'dropped' : 'ok');
            ticket?.release('dropped'); // a second release changes nothing
            released++;
          }
          const s = gate.stats;
          assert.ok(s.limit >= opts.minLimit && s.limit <= opts.maxLimit, `limit ${s.limit}`);
          assert.equal(s.inflight, held.length);
          assert.equal(s.admitted - released, s.inflight);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('sheds nothing inference would have served: without drops it refuses only at the maximum', () => {
    fc.assert(
      fc.property(settings, fc.array(op, { maxLength: 300 }), (opts, ops) => {
        const clock = new FakeClock(0);
        const gate = new AdmissionGate(opts, clock.now);
        const held: AdmissionTicket[] = [];
        for (const o of ops) {
          if (o.kind === 'advance') clock.advance(o.ms);
          else if (o.kind === 'admit') {
            const ticket = gate.tryAdmit();
            if (ticket === undefined) assert.equal(held.length, opts.maxLimit, 'refused below the maximum');
            else held.push(ticket);
          } else if (held.length > 0) held.splice(o.which % held.length, 1)[0]?.release('ok');
        }
        assert.equal(gate.limit, opts.maxLimit);
      }),
      { numRuns: 300 },
    );
  });

  it('lowers the limit as soon as drops add up (3 or more), then not again within the interval; stray drops change nothing', () => {
    fc.assert(
      fc.property(fc.integer({ min: 10, max: 200 }), fc.integer({ min: 0, max: 100 }), (max, insidePct) => {
        const clock = new FakeClock(0);
        const gate = new AdmissionGate({ maxLimit: max, minLimit: 1, intervalMs: 100 }, clock.now);
        const inside = Array.from({ length: Math.floor(((max - 6) * insidePct) / 100) }, () => gate.admit());
        const doomed = Array.from({ length: 6 }, () => gate.admit());
        doomed[0]?.release('dropped');
        doomed[1]?.release('dropped');
        assert.equal(gate.limit, max, 'two drops are noise');
        doomed[2]?.release('dropped');
        const level = Math.min(max, Math.max(1, inside.length + 3));
        const lowered = Math.max(1, Math.floor(level * 0.9));
        assert.equal(gate.limit, lowered, 'the third drop lowers the limit at once');
        for (const d of doomed.slice(3)) d.release('dropped');
        assert.equal(gate.limit, lowered, 'not again within the interval');
        clock.advance(100);
        assert.ok(gate.limit <= lowered, 'later drops may lower it again, never raise it');
        for (const k of inside) k.release('ok');
      }),
    );
  });

  it('refuses with overloaded, 503 and Retry-After; run() releases on success and on failure', async () => {
    const clock = new FakeClock(0);
    const gate = new AdmissionGate({ maxLimit: 1, minLimit: 1, intervalMs: 100 }, clock.now);
    const inside = gate.admit();
    const err = await gate.run(() => Promise.resolve(1)).catch((e: unknown) => e);
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'overloaded');
    assert.equal(err.status, 503);
    assert.equal(err.retryAfterSec, 1);
    inside.release();
    assert.equal(await gate.run(() => Promise.resolve(2)), 2);
    await assert.rejects(
      gate.run(() => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.deepEqual(gate.stats, { limit: 1, inflight: 0, admitted: 3, refused: 1, dropped: 0, waiting: 0 });
    clock.advance(1);
  });

  it('in a simulated engine with fixed inference capacity, converges to what inference serves in time', () => {
    // Inference serves `rate` requests per ms; a request admitted while more than `rate × budget` are
    // inside would wait past its budget, so inference refuses it (a drop). Offered load: `offered`
    // new requests every ms, far above capacity. After the gate settles, the door refuses the excess
    // and inference refuses (drops) only a small share of what the door admits.
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 10, max: 60 }),
        fc.integer({ min: 2, max: 6 }),
        (rate, budget, overload) => {
          const clock = new FakeClock(0);
          const gate = new AdmissionGate({ maxLimit: 2000, minLimit: 1, intervalMs: 100 }, clock.now);
          const capacity = rate * budget; // requests inference can hold within a budget
          const queue: AdmissionTicket[] = [];
          let admitted = 0;
          let drops = 0;
          let doorRefusals = 0;
          for (; clock.now() < 20_000; clock.advance(1)) {
            for (const ticket of queue.splice(0, rate)) ticket.release('ok'); // inference serves `rate` per ms
            for (let i = 0; i < rate * overload; i++) {
              const ticket = gate.tryAdmit();
              const measure = clock.now() >= 10_000;
              if (ticket === undefined) {
                if (measure) doorRefusals++;
                continue;
              }
              if (queue.length >= capacity) {
                ticket.release('dropped'); // inference: cannot meet its deadline
                if (measure) drops++;
              } else queue.push(ticket);
              if (measure) admitted++;
            }
          }
          assert.ok(doorRefusals > 0, 'the excess is refused at the door');
          assert.ok(drops <= 0.05 * admitted, `inference dropped ${drops} of ${admitted} admitted`);
          // and the door does not starve inference: it serves at least 95 % of its capacity
          const served = admitted - drops;
          assert.ok(served >= 0.95 * rate * 10_000, `served ${served}, capacity ${rate * 10_000}`);
        },
      ),
      { numRuns: 40 },
    );
  });
});
