import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { LocalTransactionGuard, RedisTransactionGuard, type Every } from '../../lib/async/transaction-guard';
import type { AppError } from '../../lib/errors/errors';
import { testRedis } from '../support/redis';

/** A gate the work waits on, and a promise that resolves once the work started (i.e. the lock is held). */
function held(): { started: Promise<void>; work: (v: string) => () => Promise<string>; release: () => void } {
  let release!: () => void;
  let start!: () => void;
  const gate = new Promise<void>((res) => (release = res));
  const started = new Promise<void>((res) => (start = res));
  return { started, release, work: (v) => () => (start(), gate.then(() => v)) };
}

/** Renewal ticks driven by the test. */
function manualEvery(): { every: Every; tick: () => void; active: () => number } {
  const ticks = new Set<() => void>();
  return {
    every: (_ms, tick) => (ticks.add(tick), () => ticks.delete(tick)),
    tick: () => ticks.forEach((t) => t()),
    active: () => ticks.size,
  };
}

describe('transaction guard', () => {
  const r = testRedis();
  after(() => r.cleanup());
  const lockKey = (tx: string): string => `${r.prefix}lock:v1:${tx}`;

  it('in-process: concurrent runs for one transaction share a single execution', async () => {
    const guard = new LocalTransactionGuard();
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    const calls = Array.from({ length: 10 }, () => guard.run('tx', async () => (runs++, await gate, 'done')));
    release();
    assert.deepEqual(await Promise.all(calls), Array(10).fill('done'));
    assert.equal(runs, 1);
    assert.equal(await guard.run('tx', async () => 'again'), 'again', 'a later run executes');
  });

  it('across instances: a second holder is refused with a transient error, and the lock is released after', async () => {
    const a = new RedisTransactionGuard(r.redis, r.prefix);
    let waits = 0;
    const b = new RedisTransactionGuard(r.redis, r.prefix, {
      waitMs: 100,
      pollMs: 25,
      sleep: () => (waits++, Promise.resolve()),
    });
    const h = held();
    const first = a.run('tx1', h.work('a'));
    await h.started; // the work runs only once the lock is taken
    assert.equal(await r.redis.exists(lockKey('tx1')), 1);
    await assert.rejects(
      b.run('tx1', async () => 'b'),
      (e: AppError) => e.code === 'transaction_in_progress' && e.transient,
    );
    assert.equal(waits, 4, 'waited (bounded) for the holder before giving up');
    h.release();
    assert.equal(await first, 'a');
    assert.equal(await r.redis.exists(lockKey('tx1')), 0);
    assert.equal(await b.run('tx1', async () => 'b'), 'b');
  });

  it('a waiter gets the lock as soon as the holder finishes', async () => {
    const a = new RedisTransactionGuard(r.redis, r.prefix);
    const h = held();
    const first = a.run('tx3', h.work('a'));
    await h.started;
    const b = new RedisTransactionGuard(r.redis, r.prefix, {
      waitMs: 10_000,
      pollMs: 1,
      sleep: async () => h.release(),
    });
    assert.equal(await b.run('tx3', async () => 'b'), 'b');
    assert.equal(await first, 'a');
  });

  it('releases the lock when the work fails', async () => {
    const g = new RedisTransactionGuard(r.redis, r.prefix);
    await assert.rejects(g.run('tx2', () => Promise.reject(new Error('x'))));
    assert.equal(await r.redis.exists(lockKey('tx2')), 0);
  });

  it('renews the lock while the holder runs, every third of its TTL, and stops when it finishes', async () => {
    const clock = manualEvery();
    let period = 0;
    const g = new RedisTransactionGuard(r.redis, r.prefix, {
      lockTtlMs: 9000,
      every: (ms, tick) => ((period = ms), clock.every(ms, tick)),
    });
    const h = held();
    let signal: AbortSignal | undefined;
    const run = g.run('tx4', (lost) => ((signal = lost), h.work('a')()));
    await h.started;
    assert.equal(period, 3000);
    await r.redis.pexpire(lockKey('tx4'), 100); // about to lapse, as after a long run
    clock.tick();
    await r.redis.ping(); // the renewal was sent before this on the same connection
    assert.ok((await r.redis.pttl(lockKey('tx4'))) > 5000, 'renewed to the full TTL');
    assert.equal(signal?.aborted, false);
    h.release();
    await run;
    assert.equal(clock.active(), 0, 'no renewal after the run');
  });

  it("aborts the holder's signal when the lock was taken over, and never deletes the new holder's lock", async () => {
    const clock = manualEvery();
    const g = new RedisTransactionGuard(r.redis, r.prefix, { every: clock.every });
    const h = held();
    let signal: AbortSignal | undefined;
    const run = g.run('tx5', (lost) => ((signal = lost), h.work('a')()));
    await h.started;
    await r.redis.set(lockKey('tx5'), 'someone-else', 'PX', 30_000); // expired and taken by another instance
    clock.tick();
    await new Promise<void>((res, rej) => {
      const t = setTimeout(() => rej(new Error('the lost-lock signal did not fire within 5 s')), 5000);
      signal?.addEventListener('abort', () => (clearTimeout(t), res()));
    });
    h.release();
    await run;
    assert.equal(await r.redis.get(lockKey('tx5')), 'someone-else');
  });

  it('stops renewing after maxHoldMs: a stuck holder loses the lock', async () => {
    const clock = manualEvery();
    const g = new RedisTransactionGuard(r.redis, r.prefix, { lockTtlMs: 3000, maxHoldMs: 2000, every: clock.every });
    const h = held();
    let signal: AbortSignal | undefined;
    const run = g.run('tx6', (lost) => ((signal = lost), h.work('a')()));
    await h.started;
    clock.tick(); // 1 s
    clock.tick(); // 2 s
    assert.equal(signal?.aborted, false);
    clock.tick(); // 3 s > maxHoldMs
    assert.equal(signal?.aborted, true);
    h.release();
    await run;
  });
});
