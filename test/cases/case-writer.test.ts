/**
 * The case writer on a real store (PGlite in a temporary folder), with fake timers: only `review` decisions are
 * queued; a batch is written when full or when its timer fires; a full queue drops and counts; a failing store
 * drops and counts, never throws to the scorer; dispose writes what is queued.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CaseStore, NewCase } from '../../lib/cases/case-store';
import { CaseWriter, type CaseDropReason } from '../../lib/cases/case-writer';
import type { DecidedPayment } from '../../lib/scoring/scorer';
import { FakeClock, FakeTimers } from '../context/support';
import { eventually } from '../support/eventually';
import { newCase, pgliteDb, suiteStore } from './support';

const T0 = Date.parse('2026-12-01T08:00:00Z');

function decided(c: NewCase, decision: string): DecidedPayment {
  return {
    event: c.payment,
    row: new Float32Array(1),
    velocity: {},
    manifest: {},
    result: {
      transactionId: c.transactionId,
      score: c.score,
      decision,
      reasons: c.reasons,
      model: c.model,
      source: 'local',
      cache: 'hit',
      timing: {},
      rules: c.rules,
    },
  } as unknown as DecidedPayment;
}

async function openIds(store: CaseStore): Promise<string[]> {
  return (await store.list({}, 'oldest', 1000)).cases.map((c) => c.transactionId).sort();
}

describe('case writer', () => {
  const s = suiteStore(pgliteDb());

  it('queues only review decisions, writes a full batch at once and a partial one when its timer fires', async () => {
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const written: number[] = [];
    const w = new CaseWriter({
      store: s.store,
      queueMax: 100,
      batchMax: 2,
      flushMs: 1000,
      timers,
      wallClock: () => T0,
      on: { written: (e) => written.push(e.opened) },
    });
    const on = w.scorerEvents();
    on.decided?.(decided(newCase('w-approve', T0), 'approve'));
    on.decided?.(decided(newCase('w-decline', T0), 'decline'));
    assert.equal(w.stats.offered, 0, 'approve and decline open no case');
    on.decided?.(decided(newCase('w-1', T0), 'review'));
    assert.equal(timers.pending.size, 1, 'a partial batch waits for its timer');
    on.decided?.(decided(newCase('w-2', T0), 'review')); // full: written now
    on.decided?.(decided(newCase('w-3', T0), 'review'));
    await eventually(
      async () => w.stats.opened,
      (n) => n === 2,
      'the full batch written',
    );
    assert.equal(timers.pending.size, 1, 'w-3 waits for its timer');
    clock.advance(1000);
    timers.runDue();
    await eventually(
      async () => w.stats.opened,
      (n) => n === 3,
      'the partial batch written when its timer fired',
    );
    await w.dispose();
    assert.deepEqual(await openIds(s.store), ['w-1', 'w-2', 'w-3']);
    assert.deepEqual(written, [2, 1]);
    assert.deepEqual(w.stats, { offered: 3, opened: 3, dropped: 0, queued: 0 });
  });

  it('drops and counts past the queue bound and after dispose, never throwing', async () => {
    const drops: CaseDropReason[] = [];
    const w = new CaseWriter({
      store: s.store,
      queueMax: 2,
      batchMax: 10,
      flushMs: 1000,
      timers: new FakeTimers(new FakeClock()),
      wallClock: () => T0,
      on: {
        dropped: (e) => {
          drops.push(e.reason);
          throw new Error('a failing handler must not reach the scorer');
        },
      },
    });
    for (const tx of ['q-1', 'q-2', 'q-3']) w.offer(newCase(tx, T0));
    assert.deepEqual(drops, ['queue_full']);
    await w.dispose();
    w.offer(newCase('q-4', T0));
    assert.deepEqual(drops, ['queue_full', 'queue_full']);
    assert.deepEqual(w.stats, { offered: 4, opened: 2, dropped: 2, queued: 0 });
  });

  it('a failing store drops the batch and counts it as write_failed', async () => {
    const drops: { count: number; reason: string; error?: string }[] = [];
    const failing: CaseStore = { ...s.store, open: () => Promise.reject(new TypeError('connection refused')) };
    const w = new CaseWriter({
      store: failing,
      queueMax: 10,
      batchMax: 10,
      flushMs: 1000,
      timers: new FakeTimers(new FakeClock()),
      wallClock: () => T0,
      on: { dropped: (e) => drops.push(e) },
    });
    w.offer(newCase('f-1', T0));
    w.offer(newCase('f-2', T0));
    await w.dispose();
    assert.deepEqual(drops, [{ count: 2, reason: 'write_failed', error: 'TypeError' }]);
    assert.equal(w.stats.dropped, 2);
  });
});
