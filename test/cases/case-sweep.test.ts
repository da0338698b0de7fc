/**
 * The case sweep on a real store (PGlite in a temporary folder), with fake timers and a wall clock the test sets:
 * cases past the retention are deleted and counted; the open cases, the oldest open case's age and the open cases
 * past their SLA (per queue) are reported;
 * a failing store is reported, never thrown, and the schedule goes on until dispose.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CaseStore } from '../../lib/cases/case-store';
import { CaseSweep } from '../../lib/cases/case-sweep';
import { FakeClock, FakeTimers } from '../support/clock';
import { eventually } from '../support/eventually';
import { newCase, pgliteDb, suiteStore } from './support';

const DAY = 86_400_000;
const NOW = Date.parse('2026-12-05T08:00:00Z');

describe('case sweep', () => {
  const s = suiteStore(pgliteDb());

  it('deletes cases past the retention and reports the open cases and the oldest open age', async () => {
    await s.store.open(
      [newCase('s-old', NOW - 40 * DAY), newCase('s-1', NOW - 2 * DAY), newCase('s-2', NOW - 3_600_000)],
      NOW,
    );
    const closing = (await s.store.list({}, 'oldest', 10)).cases.find((c) => c.transactionId === 's-2');
    await s.store.close(closing?.id ?? '0', 'alice', 'legit', undefined, NOW);
    const seen: {
      open?: { open: number; oldestAgeSec: number };
      deleted?: number;
      breached?: readonly { queue: string; count: number }[];
    } = {};
    const sweep = new CaseSweep({
      store: s.store,
      intervalMs: 60_000,
      retentionMs: 30 * DAY,
      timers: new FakeTimers(new FakeClock()),
      wallClock: () => NOW,
      on: {
        openCases: (e) => (seen.open = e),
        deleted: (e) => (seen.deleted = e.count),
        slaBreached: (e) => (seen.breached = e.byQueue),
      },
    });
    await sweep.runOnce();
    assert.equal(seen.deleted, 1, 'the case decided 40 days ago');
    assert.deepEqual(seen.open, { open: 1, oldestAgeSec: 2 * 86_400 }, 's-1 is open; s-2 is closed');
    assert.deepEqual(seen.breached, [{ queue: 'general', count: 1 }], "s-1 is past general's 24 h");
    assert.deepEqual(
      (await s.store.list({}, 'oldest', 10)).cases.map((c) => c.transactionId),
      ['s-1', 's-2'],
    );
    await sweep.dispose();
  });

  it('reports a failing store, keeps its schedule, and stops on dispose', async () => {
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const failures: string[] = [];
    let calls = 0;
    const failing = {
      deleteDecidedBefore: () => {
        calls++;
        return Promise.reject(new RangeError('down'));
      },
    } as unknown as CaseStore;
    const sweep = new CaseSweep({
      store: failing,
      intervalMs: 60_000,
      retentionMs: DAY,
      timers,
      wallClock: () => NOW,
      on: { failed: (e) => failures.push(e.error) },
    });
    sweep.start();
    await eventually(
      async () => timers.pending.size,
      (n) => n === 1,
      'the next sweep scheduled after a failed one',
    );
    clock.advance(60_000);
    timers.runDue();
    await eventually(
      async () => calls,
      (n) => n === 2,
      'the second sweep',
    );
    await eventually(
      async () => timers.pending.size,
      (n) => n === 1,
      'the third sweep scheduled',
    );
    await sweep.dispose();
    assert.deepEqual(failures, ['RangeError', 'RangeError']);
    assert.equal(timers.pending.size, 0, 'no sweep scheduled after dispose');
  });
});
