import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { BatchLocks, type LockedStatus } from '../../lib/async/batch-locks';
import { LocalTransactionGuard, RedisTransactionGuard } from '../../lib/async/transaction-guard';
import { toAppError } from '../../lib/errors/errors';
import { testRedis } from '../support/redis';

const statuses = (held: ReadonlyMap<string, AbortSignal>, status: (tx: string) => LockedStatus) =>
  new Map([...held.keys()].map((tx) => [tx, status(tx)]));

describe('batch locks', () => {
  const r = testRedis();
  after(() => r.cleanup());

  it('two batches of one process sharing transactions both finish (no deadlock)', { timeout: 10_000 }, async () => {
    const locks = new BatchLocks(new LocalTransactionGuard());
    let bStarted!: () => void;
    const gateA = new Promise<void>((res) => (bStarted = res));
    // A holds t1 and t2 until B's work has started: B must not wait for A's transactions before its own work
    const a = locks.run(['t1', 't2'], async (held) => {
      await gateA;
      return statuses(held, (tx) => (tx === 't2' ? 'failed' : 'done'));
    });
    const bHeld: string[] = [];
    const b = locks.run(['t2', 't1', 't3'], async (held) => {
      bHeld.push(...held.keys());
      bStarted();
      return statuses(held, () => 'done');
    });
    const [ra, rb] = await Promise.all([a, b]);
    assert.deepEqual([...ra.held.keys()], ['t1', 't2']);
    assert.deepEqual(bHeld, ['t3'], 'B works on what it holds, without waiting for A');
    assert.deepEqual(
      new Map([...rb.shared].sort()),
      new Map([
        ['t1', 'done'],
        ['t2', 'failed'],
      ]),
      'B gets how A ended for the transactions they shared',
    );
    assert.equal(rb.failed.size, 0);
    const again = await locks.run(['t1'], async (held) => statuses(held, () => 'done'));
    assert.deepEqual([...again.held.keys()], ['t1'], 'the locks are free again');
  });

  it('a transaction locked by another instance is refused after the wait; the rest of the batch is locked', async () => {
    const prefix = `${r.prefix}bl:`;
    await r.redis.set(`${prefix}lock:v1:busy`, 'other-instance', 'PX', 30_000);
    const locks = new BatchLocks(new RedisTransactionGuard(r.redis, prefix, { waitMs: 50, pollMs: 10 }));
    let lockedDuringWork = 0;
    const run = await locks.run(['free1', 'busy', 'free2'], async (held) => {
      lockedDuringWork = await r.redis.exists(`${prefix}lock:v1:free1`, `${prefix}lock:v1:free2`);
      return statuses(held, () => 'done');
    });
    assert.deepEqual([...run.held.keys()].sort(), ['free1', 'free2']);
    assert.equal(lockedDuringWork, 2, 'held in Redis while the work ran');
    assert.equal(toAppError(run.failed.get('busy')).code, 'transaction_in_progress');
    assert.equal(await r.redis.exists(`${prefix}lock:v1:free1`, `${prefix}lock:v1:free2`), 0, 'released after');
    assert.equal(await r.redis.get(`${prefix}lock:v1:busy`), 'other-instance', 'the other holder’s lock untouched');
  });

  it('work that throws releases every lock and rethrows', async () => {
    const prefix = `${r.prefix}bl2:`;
    const locks = new BatchLocks(new RedisTransactionGuard(r.redis, prefix));
    await assert.rejects(
      locks.run(['x1', 'x2'], () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(await r.redis.exists(`${prefix}lock:v1:x1`, `${prefix}lock:v1:x2`), 0);
    const again = await locks.run(['x1'], async (held) => statuses(held, () => 'done'));
    assert.deepEqual([...again.held.keys()], ['x1']);
  });
});
