/**
 * The pointer follower's retry of an incomplete pass: soon after it (not at the next reconcile period), backing off
 * up to a bound, one retry pending at a time, none once a pass completes or the follower is disposed. Hand-driven
 * timers: nothing depends on the scheduler.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PointerFollower } from '../../lib/rollout/pointer-follower';
import { FakeTimers, settle } from '../support/clock';

/** A follower whose passes report the given outcomes in turn (then complete), recording when each ran. */
function follower(time: FakeTimers, outcomes: boolean[], retry = { firstMs: 100, maxMs: 400 }) {
  const at: number[] = [];
  const f = new PointerFollower(
    { name: 'x', store: { subscribe: () => Promise.resolve(true) }, timers: time, intervalMs: 30_000 },
    () => (at.push(time.now()), Promise.resolve(outcomes.shift() ?? true)),
    { retry },
  );
  return { f, at };
}

/** Advances hand-driven time in 50 ms steps, letting each pass run. */
async function run(time: FakeTimers, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 50) {
    time.advance(50);
    await settle();
  }
}

describe('pointer follower: retry of an incomplete pass', () => {
  it('retries soon after an incomplete pass, doubling up to the bound, and stops once a pass completes', async () => {
    const time = new FakeTimers();
    const { f, at } = follower(time, [false, false, false, false, false]);
    await f.start();
    await run(time, 2000);
    // the first pass at 0, then retries after 100, 200, 400, 400 ms, the sixth completes: no more before 30 s
    assert.deepEqual(at, [0, 100, 300, 700, 1100, 1500]);
    await f.dispose();
  });

  it('keeps one retry pending however many incomplete passes an announcement adds', async () => {
    const time = new FakeTimers();
    const { f, at } = follower(time, [false, false, false]);
    await f.start();
    await f.converge(); // incomplete again: the retry already pending stays the only one
    assert.equal(time.pending.size, 2, 'the reconcile period and one retry');
    await run(time, 1000);
    assert.deepEqual(at, [0, 0, 100, 300]);
    await f.dispose();
  });

  it('without the retry option, an incomplete pass waits for the reconcile period', async () => {
    const time = new FakeTimers();
    const at: number[] = [];
    const f = new PointerFollower(
      { name: 'x', store: { subscribe: () => Promise.resolve(true) }, timers: time, intervalMs: 30_000 },
      () => (at.push(time.now()), Promise.resolve(false)),
    );
    await f.start();
    await run(time, 1000);
    assert.deepEqual(at, [0]);
    await f.dispose();
  });

  it('schedules nothing once disposed', async () => {
    const time = new FakeTimers();
    const { f, at } = follower(time, [false, false]);
    await f.start();
    await f.dispose();
    assert.equal(time.pending.size, 0);
    await run(time, 1000);
    assert.deepEqual(at, [0]);
  });
});
