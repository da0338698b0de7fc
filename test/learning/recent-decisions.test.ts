/**
 * The recent decisions' write and read paths (lib/learning/recent-decisions.ts): the scorer's `decided` event is a
 * compact entry queued (nothing written on the caller's path), written in batches by the keyed hash of the user id;
 * without the hash key, or when the store fails, entries are dropped and counted and the event never throws; a read
 * answers `undefined` when the store fails or does not answer within its budget; dispose writes what is queued.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedHash } from '../../lib/platform/keyed-hash';
import { RecentDecisions, type RecentDecisionStore } from '../../lib/learning/recent-decisions';
import { MemoryRecentDecisionStore, type RecentBatch } from '../../lib/learning/recent-decisions-store';
import type { DecidedPayment } from '../../lib/scoring/scorer';
import { FakeTimers, settle } from '../support/clock';
import { validEvent } from '../support/events';

const hash = new KeyedHash('recent-decisions-test-key-0123456789');
const AT = Date.parse('2026-12-01T09:00:00Z');

/** A decided payment as the scorer reports it (the fields the entry reads). */
function decided(tx: string, userId: string, decision = 'approve', rules: string[] = []): DecidedPayment {
  return {
    event: validEvent({ transactionId: tx, userId, amount: 42.5, merchantId: 'm-7' }),
    row: new Float32Array(3),
    velocity: {},
    manifest: {},
    result: {
      transactionId: tx,
      score: 0.25,
      decision,
      model: { name: 'fraud', version: '2.1.0' },
      rules: rules.map((id) => ({ id, action: 'review' })),
    },
  } as unknown as DecidedPayment;
}

function recent(
  store: RecentDecisionStore,
  key: KeyedHash | undefined,
  timers = new FakeTimers(),
  told: string[] = [],
): RecentDecisions {
  return new RecentDecisions({
    on: {
      written: (e) => told.push(`written ${e.count}`),
      dropped: (e) => told.push(`dropped ${e.count} ${e.reason}`),
    },
    store,
    hash: () => key,
    ttlMs: 30 * 86_400_000,
    queueMax: 3,
    batchMax: 10,
    flushMs: 100,
    readTimeoutMs: 50,
    timers,
    wallClock: () => AT,
  });
}

/** A store that records the batches it is given (and may fail them). */
class SpyStore extends MemoryRecentDecisionStore {
  readonly batches: RecentBatch[] = [];
  fail = false;
  constructor() {
    super({ perUser: 20, ttlMs: 30 * 86_400_000, maxUsers: 100 });
  }
  override add(batch: RecentBatch): Promise<void> {
    this.batches.push(batch);
    return this.fail ? Promise.reject(new Error('store down')) : super.add(batch);
  }
}

describe('recent decisions: the write path', () => {
  it('queues a compact entry per decision and writes them in one batch, keyed by the hashed user id', async () => {
    const store = new SpyStore();
    const timers = new FakeTimers();
    const told: string[] = [];
    const r = recent(store, hash, timers, told);
    const on = r.scorerEvents();
    on.decided?.(decided('tx-1', 'user-1'));
    on.decided?.(decided('tx-2', 'user-1', 'review', ['large-amount-new-device']));
    on.decided?.(decided('tx-3', 'user-2', 'decline'));
    assert.equal(store.batches.length, 0, 'nothing written on the caller path');
    timers.advance(100);
    await settle();
    assert.equal(store.batches.length, 1);
    assert.deepEqual([...(store.batches[0]?.keys() ?? [])], [hash.of('user-1'), hash.of('user-2')]);
    const got = await r.forUser('user-1');
    assert.deepEqual(got, [
      {
        transactionId: 'tx-2',
        decidedAt: '2026-12-01T09:00:00.000Z',
        amount: 42.5,
        currency: 'EUR',
        merchantId: 'm-7',
        decision: 'review',
        score: 0.25,
        rules: ['large-amount-new-device'],
        modelVersion: '2.1.0',
      },
      { ...got?.[1], transactionId: 'tx-1', decision: 'approve', rules: [] },
    ]);
    assert.deepEqual(r.stats, { written: 3, dropped: 0, queued: 0 });
    assert.deepEqual(told, ['written 3'], 'the batch told once');
    await r.dispose();
  });

  it('a full queue, a missing hash key or a failing store drops entries and counts them; decided never throws', async () => {
    const store = new SpyStore();
    const timers = new FakeTimers();
    const told: string[] = [];
    const noKey = recent(store, undefined, timers, told);
    noKey.scorerEvents().decided?.(decided('tx-k', 'user-k'));
    timers.advance(100);
    await settle();
    assert.equal(store.batches.length, 0, 'nothing written without the key');
    assert.equal(noKey.stats.dropped, 1);
    assert.equal(await noKey.forUser('user-k'), undefined, 'no read without the key');

    const failing = recent(store, hash, timers, told);
    store.fail = true;
    for (let i = 0; i < 5; i++) failing.scorerEvents().decided?.(decided(`tx-${i}`, 'user-f'));
    assert.equal(failing.stats.dropped, 2, 'queueMax 3: two refused');
    timers.advance(100);
    await settle();
    assert.deepEqual(failing.stats, { written: 0, dropped: 5, queued: 0 });
    assert.doesNotThrow(() => failing.scorerEvents().decided?.({} as DecidedPayment), 'a malformed event is dropped');
    assert.equal(failing.stats.dropped, 6);
    assert.deepEqual(
      told,
      [
        'dropped 1 no_hash_key',
        'dropped 1 queue_full',
        'dropped 1 queue_full',
        'dropped 3 write_failed',
        'dropped 1 entry_failed',
      ],
      'each drop told, with its reason',
    );
    await failing.dispose();
    await noKey.dispose();
  });

  it('dispose writes what is queued', async () => {
    const store = new SpyStore();
    const r = recent(store, hash);
    r.scorerEvents().decided?.(decided('tx-d', 'user-d'));
    await r.dispose();
    assert.equal(store.batches.length, 1);
  });
});

/** A store whose reads are `read`. */
const reading = (read: () => Promise<never>): RecentDecisionStore => ({
  add: () => Promise.resolve(),
  read,
  erase: () => Promise.resolve(false),
  dispose: () => Promise.resolve(),
});

describe('recent decisions: the read path', () => {
  it('answers undefined when the store fails, or does not answer within the budget', async () => {
    const failing = recent(
      reading(() => Promise.reject(new Error('down'))),
      hash,
    );
    assert.equal(await failing.forUser('user-1'), undefined);
    const hanging = recent(
      reading(() => new Promise<never>(() => undefined)),
      hash,
    );
    assert.equal(await hanging.forUser('user-1'), undefined, 'the 50 ms budget ran out');
  });
});
