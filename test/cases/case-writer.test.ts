/**
 * The case writer's hand-off to the intake queue, with fake timers: only `review` decisions are offered; a local
 * queue (the embedded bus) takes a case before the handler returns; a remote one gets batches (full at once, partial
 * when the timer fires); an unreachable queue is retried with backoff from the bounded buffer, and a full buffer
 * drops and counts exactly; dispose gives a failing batch one last try and counts what it drops.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InProcessBus } from '../../local/in-process-bus';
import { BusCaseHandOff, type CaseHandOff } from '../../lib/cases/case-handoff';
import type { NewCase } from '../../lib/cases/case-store';
import { CaseWriter, type CaseDropReason } from '../../lib/cases/case-writer';
import type { DecidedPayment } from '../../lib/scoring/scorer';
import { FakeClock, FakeTimers } from '../support/clock';
import { eventually } from '../support/eventually';
import { newCase } from './support';

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

/** A remote queue (no `sendNow`) that fails while `down` is set, recording what it accepted. */
function remoteQueue(): CaseHandOff & { down: boolean; readonly got: string[][] } {
  const q = {
    down: false,
    got: [] as string[][],
    send(cases: readonly NewCase[]): Promise<{ refused: number }> {
      if (q.down) return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      q.got.push(cases.map((c) => c.transactionId));
      return Promise.resolve({ refused: 0 });
    },
    dispose: () => Promise.resolve(),
  };
  return q;
}

describe('case writer', () => {
  it('hands a review to the embedded bus before the handler returns; approve and decline open nothing', () => {
    const bus = new InProcessBus();
    const w = new CaseWriter({
      handOff: new BusCaseHandOff(bus, 'case-intake'),
      queueMax: 10,
      batchMax: 10,
      flushMs: 1000,
      timers: new FakeTimers(new FakeClock()),
      wallClock: () => T0,
    });
    const on = w.scorerEvents();
    on.decided?.(decided(newCase('b-approve', T0), 'approve'));
    on.decided?.(decided(newCase('b-decline', T0), 'decline'));
    on.decided?.(decided(newCase('b-1', T0), 'review'));
    on.decided?.(decided(newCase('b-1', T0), 'review')); // a redelivered payment: the queue's duplicate detection
    assert.deepEqual(
      bus.messages('case-intake').map((m) => m.messageId),
      ['b-1'],
    );
    assert.deepEqual(w.stats, { offered: 2, handedOff: 2, dropped: 0, queued: 0 });
  });

  it('a remote queue gets a full batch at once and a partial one when its timer fires', async () => {
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const q = remoteQueue();
    const w = new CaseWriter({ handOff: q, queueMax: 100, batchMax: 2, flushMs: 1000, timers, wallClock: () => T0 });
    for (const tx of ['r-1', 'r-2', 'r-3']) w.offer(newCase(tx, T0));
    await eventually(
      async () => w.stats.handedOff,
      (n) => n === 2,
      'the full batch handed off',
    );
    assert.equal(timers.pending.size, 1, 'r-3 waits for its timer');
    clock.advance(1000);
    timers.runDue();
    await eventually(
      async () => w.stats.handedOff,
      (n) => n === 3,
      'the partial batch handed off when its timer fired',
    );
    await w.dispose();
    assert.deepEqual(q.got, [['r-1', 'r-2'], ['r-3']]);
  });

  it('retries an unreachable queue with backoff, drops exactly what does not fit, loses nothing else', async () => {
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const q = remoteQueue();
    q.down = true;
    const drops: { count: number; reason: CaseDropReason }[] = [];
    const failed: number[] = [];
    const w = new CaseWriter({
      handOff: q,
      queueMax: 3,
      batchMax: 2,
      flushMs: 1000,
      retryBaseMs: 100,
      retryMaxMs: 400,
      timers,
      wallClock: () => T0,
      on: {
        dropped: (e) => {
          drops.push(e);
          throw new Error('a failing handler must not reach the scorer');
        },
        handOffFailed: (e) => failed.push(e.retryInMs),
      },
    });
    for (const tx of ['u-1', 'u-2']) w.offer(newCase(tx, T0)); // a full batch: handed off now, and fails
    await eventually(
      async () => failed.length,
      (n) => n === 1,
      'the first failed hand-off',
    );
    for (const tx of ['u-3', 'u-4', 'u-5', 'u-6']) w.offer(newCase(tx, T0)); // 3 fit in the buffer, 1 is dropped
    assert.deepEqual(drops, [{ count: 1, reason: 'queue_full' }]);
    const waits = [100, 200, 400, 400];
    for (const [i, wait] of waits.entries()) {
      assert.equal(failed[i], wait, 'exponential backoff, bounded');
      clock.advance(wait);
      timers.runDue();
      await eventually(
        async () => failed.length,
        (n) => n === i + 2,
        `the retry after ${wait} ms`,
      );
    }
    q.down = false;
    clock.advance(400);
    timers.runDue();
    await eventually(
      async () => w.stats.handedOff,
      (n) => n === 4,
      'the batch and the next one handed off once the queue is back',
    );
    clock.advance(1000);
    timers.runDue();
    await eventually(
      async () => w.stats.handedOff,
      (n) => n === 5,
      'the rest handed off',
    );
    assert.deepEqual(q.got.flat(), ['u-1', 'u-2', 'u-3', 'u-4', 'u-5']);
    await w.dispose();
    assert.deepEqual(w.stats, { offered: 6, handedOff: 5, dropped: 1, queued: 0 });
  });

  it('dispose gives a failing batch one last try, then counts it as handoff_failed; later offers are dropped', async () => {
    const q = remoteQueue();
    q.down = true;
    const drops: { count: number; reason: string; error?: string }[] = [];
    const w = new CaseWriter({
      handOff: q,
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
    w.offer(newCase('f-3', T0));
    assert.deepEqual(drops, [
      { count: 2, reason: 'handoff_failed', error: 'Error' },
      { count: 1, reason: 'queue_full' },
    ]);
    assert.deepEqual(w.stats, { offered: 3, handedOff: 0, dropped: 3, queued: 0 });
  });
});
