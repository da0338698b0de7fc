/**
 * The recent-decisions store on the test Redis (its own key prefix, removed after): the shared contract
 * (recent-decisions-contract.ts), every key scanned for the raw user id; and a batch is one script call per group
 * of users (the hash's last digit, a hash tag), whatever the entries per user.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { RedisRecentDecisionStore, recentKey } from '../../lib/learning/recent-decisions-redis';
import { testRedis } from '../support/redis';
import { until } from '../support/store-pair';
import { CONTRACT_BOUNDS, entry, recentStoreContract } from './recent-decisions-contract';

recentStoreContract('redis', () => {
  const { redis, prefix, cleanup } = testRedis();
  return Promise.resolve({
    store: new RedisRecentDecisionStore(() => redis, { ...CONTRACT_BOUNDS, prefix }),
    remainingMs: async (u: string) => {
      const left = await redis.pttl(recentKey(prefix, u));
      return left < 0 ? undefined : left;
    },
    keys: async () => {
      const found: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 100);
        found.push(...batch);
        cursor = next;
      } while (cursor !== '0');
      return found;
    },
    cleanup,
  });
});

describe('recent decisions in Redis: the writes of a batch', () => {
  const { redis, prefix, cleanup } = testRedis();
  after(cleanup);

  it('one script call per group of users (one cluster slot each), whatever the entries per user', async () => {
    const monitor = await redis.monitor(); // a connection of its own
    const commands: string[] = [];
    monitor.on('monitor', (_t: string, args: string[]) => {
      const keys = args.slice(3, 3 + Number(args[2] ?? 0)).map(String);
      if (keys.some((k) => k.startsWith(prefix))) commands.push(`${String(args[0]).toLowerCase()} ${keys.join(' ')}`);
    });
    const store = new RedisRecentDecisionStore(() => redis, { ...CONTRACT_BOUNDS, prefix });
    await store.add(
      new Map([
        ['h_1a', [entry('tx-1', 1), entry('tx-2', 2), entry('tx-3', 3)]],
        ['h_2a', [entry('tx-4', 4)]],
        ['h_3b', [entry('tx-5', 5)]],
      ]),
    );
    await until(() => commands.length >= 2, "the monitor to see the batch's calls");
    monitor.disconnect();
    // an EVALSHA the server does not know yet is followed by the EVAL that loads it: the same call
    const calls = new Set(commands.filter((c) => c.startsWith('eval')).map((c) => c.replace(/^evalsha |^eval /, '')));
    assert.deepEqual([...calls].sort(), [
      `${recentKey(prefix, 'h_1a')} ${recentKey(prefix, 'h_2a')}`,
      `${recentKey(prefix, 'h_3b')}`,
    ]);
    assert.deepEqual(
      (await store.read('h_1a')).map((e) => e.transactionId),
      ['tx-3', 'tx-2', 'tx-1'],
    );
  });

  it('a write fails when Redis is not there (the queue counts the batch as dropped)', async () => {
    const store = new RedisRecentDecisionStore(() => undefined, { ...CONTRACT_BOUNDS, prefix });
    await assert.rejects(store.add(new Map([['h_x', [entry('tx-x', 1)]]])));
  });
});
