import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { LocalTransactionGuard, RedisTransactionGuard } from '../../lib/async/transaction-guard';
import type { AppError } from '../../lib/errors/errors';
import { testRedis } from '../support/redis';

describe('transaction guard', () => {
  const r = testRedis();
  after(() => r.cleanup());

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
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    const first = a.run('tx1', () => gate.then(() => 'a'));
    await new Promise((res) => setImmediate(res));
    while ((await r.redis.exists(`${r.prefix}lock:v1:tx1`)) === 0) await new Promise((res) => setImmediate(res));
    await assert.rejects(
      b.run('tx1', async () => 'b'),
      (e: AppError) => e.code === 'transaction_in_progress' && e.transient,
    );
    assert.equal(waits, 4, 'waited (bounded) for the holder before giving up');
    release();
    assert.equal(await first, 'a');
    assert.equal(await r.redis.exists(`${r.prefix}lock:v1:tx1`), 0);
    assert.equal(await b.run('tx1', async () => 'b'), 'b');
  });

  it('a waiter gets the lock as soon as the holder finishes', async () => {
    const a = new RedisTransactionGuard(r.redis, r.prefix);
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    const first = a.run('tx3', () => gate.then(() => 'a'));
    while ((await r.redis.exists(`${r.prefix}lock:v1:tx3`)) === 0) await new Promise((res) => setImmediate(res));
    const b = new RedisTransactionGuard(r.redis, r.prefix, { waitMs: 10_000, pollMs: 1, sleep: async () => release() });
    assert.equal(await b.run('tx3', async () => 'b'), 'b');
    assert.equal(await first, 'a');
  });

  it('releases the lock when the work fails', async () => {
    const g = new RedisTransactionGuard(r.redis, r.prefix);
    await assert.rejects(g.run('tx2', () => Promise.reject(new Error('x'))));
    assert.equal(await r.redis.exists(`${r.prefix}lock:v1:tx2`), 0);
  });
});
