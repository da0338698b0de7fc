/**
 * The outbox relay's schedule, with time driven by hand (no database: the outbox is unreachable): a pass that cannot
 * read the outbox is retried after 1 s doubling, capped by the poll; a wake (a commit) passes at once; before `start`
 * and after `dispose` nothing is scheduled; a subscriber that throws never stops it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OutboxRelay, errorName } from '../../lib/cases/outbox-relay';
import { AppError } from '../../lib/errors/errors';
import type { Timers } from '../../lib/platform/timers';
import { within } from '../support/eventually';

/** Timers run by hand: `fire()` runs the one pending callback. */
function manualTimers(): Timers & { pending: Map<number, { fn: () => void; ms: number }>; fire(): number } {
  let next = 0;
  const pending = new Map<number, { fn: () => void; ms: number }>();
  return {
    pending,
    setTimeout: (fn, ms) => {
      pending.set(++next, { fn, ms });
      return next;
    },
    clearTimeout: (h) => void pending.delete(h as number),
    fire() {
      assert.equal(pending.size, 1, 'one timer pending');
      const [h, t] = [...pending][0] ?? assert.fail('no timer pending');
      pending.delete(h);
      t.fn();
      return t.ms;
    },
  };
}

describe('outbox relay schedule', () => {
  it('retries an unreachable outbox after 1 s doubling (capped by the poll); a wake passes at once; dispose stops it', async () => {
    const timers = manualTimers();
    const seen: number[] = [];
    let failed: () => void = () => undefined;
    const relay = new OutboxRelay({
      sql: () => {
        throw new AppError('dependency_unavailable', 'The case store is not reachable yet; retry the call.');
      },
      deliver: () => Promise.resolve(),
      timers,
      wallClock: () => 0,
      pollMs: 3_000,
      on: {
        passFailed: (e) => {
          seen.push(e.retryInMs);
          failed();
          throw new Error('a subscriber that throws');
        },
      },
    });
    relay.wake();
    assert.equal(timers.pending.size, 0, 'nothing before start');
    relay.start();
    assert.equal([...timers.pending.values()][0]?.ms, 0, 'start: a first pass at once');
    for (let i = 0; i < 3; i++) {
      const passFailed = new Promise<void>((r) => (failed = r));
      timers.fire();
      await within(passFailed, `failed pass ${i + 1}`, 10_000);
      assert.equal([...timers.pending.values()][0]?.ms, seen[i], 'the next pass waits the backoff');
    }
    assert.deepEqual(seen, [1_000, 2_000, 3_000], 'backoff doubling, capped by the poll');
    relay.wake(); // a verdict committed: a pass now instead of the wait
    assert.deepEqual(
      [...timers.pending.values()].map((t) => t.ms),
      [0],
    );
    await relay.dispose();
    assert.equal(timers.pending.size, 0, 'dispose clears the timer');
    relay.wake();
    assert.equal(timers.pending.size, 0, 'a wake after dispose schedules nothing');
  });

  it('names an error by its code or class, never its message', () => {
    assert.equal(errorName(new AppError('dependency_unavailable', 'user-42 down')), 'dependency_unavailable');
    assert.equal(errorName(new TypeError('card 4111')), 'TypeError');
    assert.equal(errorName('text'), 'error');
  });
});
