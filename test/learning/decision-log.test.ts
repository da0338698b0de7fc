/**
 * The decision log's write path: batches by size and by time (timers driven by hand), one append per hour
 * partition, drops counted when the queue is full or the store fails, a flush on dispose, and never a throw.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecisionLog, type DropReason } from '../../lib/learning/decision-log';
import type { DecisionRecord } from '../../lib/learning/decision-record';
import type { LearningStore } from '../../lib/learning/learning-store';
import type { Timers } from '../../lib/platform/timers';

class ManualTimers implements Timers {
  pending = new Map<number, () => void>();
  private id = 0;
  setTimeout(fn: () => void): unknown {
    this.pending.set(++this.id, fn);
    return this.id;
  }
  clearTimeout(h: unknown): void {
    this.pending.delete(h as number);
  }
  fire(): void {
    const fns = [...this.pending.values()];
    this.pending.clear();
    fns.forEach((f) => f());
  }
}

/** A store that keeps appends in memory, can fail, and can hold every append until released. */
class MemoryStore implements LearningStore {
  appends: { name: string; lines: string[] }[] = [];
  fail = false;
  gate: Promise<void> | undefined;
  async append(name: string, text: string): Promise<void> {
    await this.gate;
    if (this.fail) throw new Error('storage down');
    this.appends.push({ name, lines: text.trimEnd().split('\n') });
  }
  createIfAbsent(): Promise<boolean> {
    return Promise.resolve(true);
  }
  list(): Promise<string[]> {
    return Promise.resolve([]);
  }
  read(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }
  replace(): Promise<void> {
    return Promise.resolve();
  }
  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

const record = (i: number, at = '2026-12-01T21:30:00.000Z'): DecisionRecord => ({
  v: 1,
  transactionId: `tx-${i}`,
  decidedAt: at,
  model: { name: 'fraud', version: '1.0.0' },
  features: { amount_log: 1 },
  velocity: { count1m: 0, count1h: 0, count24h: 0, sum24h: 0, distinctCountries24h: 0 },
  score: 0.1,
  decision: 'approve',
  rules: [],
  source: 'local',
  event: { transactionId: `tx-${i}` },
  hashed: [],
});

function setup(o: { queueMax?: number; batchMax?: number } = {}) {
  const store = new MemoryStore();
  const timers = new ManualTimers();
  const drops: { count: number; reason: DropReason }[] = [];
  const log = new DecisionLog({
    store,
    writer: 'w1',
    queueMax: o.queueMax ?? 100,
    batchMax: o.batchMax ?? 10,
    flushMs: 1000,
    timers,
    on: { dropped: (e) => drops.push({ count: e.count, reason: e.reason }) },
  });
  return { store, timers, drops, log };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('decision log', () => {
  it('writes a batch when the timer fires, one append per hour partition, named by hour and writer', async () => {
    const { store, timers, log } = setup();
    log.append(record(1));
    log.append(record(2, '2026-12-01T22:05:00.000Z'));
    log.append(record(3));
    assert.equal(store.appends.length, 0, 'nothing written before the timer');
    timers.fire();
    await settle();
    assert.deepEqual(
      store.appends.map((a) => [a.name, a.lines.map((l) => (JSON.parse(l) as DecisionRecord).transactionId)]),
      [
        ['decisions/2026/12/01/21/w1.jsonl', ['tx-1', 'tx-3']],
        ['decisions/2026/12/01/22/w1.jsonl', ['tx-2']],
      ],
    );
    assert.deepEqual(log.stats, { written: 3, dropped: 0, queued: 0 });
  });

  it('writes at once when a batch is full, without waiting for the timer', async () => {
    const { store, log } = setup({ batchMax: 3 });
    for (let i = 0; i < 3; i++) log.append(record(i));
    await settle();
    assert.equal(store.appends[0]?.lines.length, 3);
  });

  it('drops and counts every record past the queue bound, without throwing', async () => {
    const { store, drops, log, timers } = setup({ queueMax: 5, batchMax: 100 });
    for (let i = 0; i < 8; i++) log.append(record(i));
    assert.deepEqual(drops, [
      { count: 1, reason: 'queue_full' },
      { count: 1, reason: 'queue_full' },
      { count: 1, reason: 'queue_full' },
    ]);
    timers.fire();
    await settle();
    assert.equal(store.appends[0]?.lines.length, 5);
    assert.deepEqual(log.stats, { written: 5, dropped: 3, queued: 0 });
  });

  it('counts a failed write as dropped records and goes on with the next batch', async () => {
    const { store, drops, log, timers } = setup();
    store.fail = true;
    log.append(record(1));
    log.append(record(2));
    timers.fire();
    await settle();
    assert.deepEqual(drops, [{ count: 2, reason: 'write_failed' }]);
    store.fail = false;
    log.append(record(3));
    timers.fire();
    await settle();
    assert.deepEqual(log.stats, { written: 1, dropped: 2, queued: 0 });
  });

  it('flushes everything queued on dispose (also behind a slow write), then drops later records', async () => {
    const { store, log, drops } = setup({ batchMax: 2 });
    let release: () => void = () => undefined;
    store.gate = new Promise((r) => (release = r));
    for (let i = 0; i < 5; i++) log.append(record(i)); // one batch in flight, three queued
    const disposed = log.dispose();
    release();
    await disposed;
    assert.equal(store.appends.flatMap((a) => a.lines).length, 5);
    log.append(record(9));
    assert.deepEqual(drops, [{ count: 1, reason: 'queue_full' }]);
  });
});
