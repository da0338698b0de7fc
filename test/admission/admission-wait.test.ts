/**
 * `AdmissionGate.admitWithin` (the Service Bus path's admission): a caller that can wait gets the next
 * freed slot, ahead of new arrivals and oldest first, or `undefined` (counted as refused) when its wait
 * ends first. Injected clock and timers: nothing here sleeps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionGate } from '../../lib/admission/admission-gate';
import type { Timers } from '../../lib/platform/timers';

/** Timers fired by hand. */
function manualTimers(): Timers & { fire(): void; readonly pending: number } {
  const timers = new Map<number, () => void>();
  let next = 0;
  return {
    setTimeout: (fn) => {
      timers.set(++next, fn);
      return next;
    },
    clearTimeout: (h) => void timers.delete(h as number),
    fire: () => {
      const fns = [...timers.values()];
      timers.clear();
      fns.forEach((f) => f());
    },
    get pending() {
      return timers.size;
    },
  };
}

const gate = (limit: number): AdmissionGate =>
  new AdmissionGate({ maxLimit: limit, minLimit: limit, intervalMs: 100 }, () => 0);

describe('AdmissionGate.admitWithin', () => {
  it('admits at once when there is room, without a timer', async () => {
    const timers = manualTimers();
    const g = gate(2);
    const t = await g.admitWithin(1000, timers);
    assert.ok(t !== undefined);
    assert.equal(timers.pending, 0);
    assert.equal(g.stats.inflight, 1);
  });

  it('hands a freed slot to the oldest waiter before any new arrival', async () => {
    const timers = manualTimers();
    const g = gate(1);
    const held = g.tryAdmit();
    assert.ok(held !== undefined);
    const first = g.admitWithin(1000, timers);
    const second = g.admitWithin(1000, timers);
    held.release();
    assert.equal(g.tryAdmit(), undefined, 'the freed slot went to the waiter, not to a new arrival');
    const t1 = await first;
    assert.ok(t1 !== undefined, 'the oldest waiter got the slot');
    assert.equal(g.stats.inflight, 1);
    assert.equal(timers.pending, 1, "the first waiter's timer was cleared; the second still waits");
    t1.release();
    const t2 = await second;
    assert.ok(t2 !== undefined, 'then the next waiter');
    t2.release();
    assert.equal(g.stats.inflight, 0);
    assert.equal(g.stats.admitted, 3);
  });

  it('gives up when its wait ends first: undefined, counted as refused, and no longer queued', async () => {
    const timers = manualTimers();
    const g = gate(1);
    const held = g.tryAdmit();
    assert.ok(held !== undefined);
    const refusedBefore = g.stats.refused;
    const waiting = g.admitWithin(50, timers);
    assert.equal(g.stats.refused, refusedBefore, 'waiting is not a refusal');
    timers.fire();
    assert.equal(await waiting, undefined);
    assert.equal(g.stats.refused, refusedBefore + 1);
    held.release();
    assert.equal(g.stats.inflight, 0, 'a slot freed after the wait ended goes to nobody');
  });
});

describe('AdmissionGate.restartIfDrained', () => {
  it('puts the limit back at its maximum only once nothing is inside', () => {
    const gate = new AdmissionGate({ maxLimit: 10, minLimit: 2, intervalMs: 100 }, () => 0);
    const tickets = Array.from({ length: 4 }, () => gate.tryAdmit());
    for (const t of tickets.slice(0, 3)) t?.release('dropped');
    const lowered = gate.limit;
    assert.ok(lowered < 10, `limit after 3 drops: ${lowered}`);
    assert.equal(gate.restartIfDrained(), false, 'one request still inside');
    assert.equal(gate.limit, lowered);
    tickets[3]?.release('ok');
    assert.equal(gate.restartIfDrained(), true);
    assert.equal(gate.limit, 10);
    assert.equal(gate.restartIfDrained(), false, 'already at its maximum');
    assert.equal(gate.stats.dropped, 3, 'counters are kept');
  });
});
