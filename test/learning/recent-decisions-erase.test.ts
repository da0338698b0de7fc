/**
 * `npm run learning:erase -- --user <userId>` (lib/commands/erase-command.ts) deletes the user's recent decisions
 * from the Redis the settings name (the test Redis, a key prefix of its own), found by the keyed hash of the id with
 * the log's key; another user's stay; `--hash` finds them too; without Redis configured there is nothing to delete
 * (`recent` undefined).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { eraseCommand } from '../../lib/commands/erase-command';
import { hashFromConfig } from '../../lib/commands/learning-cli';
import { RedisRecentDecisionStore, recentKey } from '../../lib/learning/recent-decisions-redis';
import { testConfig } from '../support/config';
import { testRedis } from '../support/redis';
import { entry } from './recent-decisions-contract';

describe('erasure of the recent decisions', () => {
  const { redis, prefix, cleanup } = testRedis();
  after(cleanup);
  const config = testConfig({
    REDIS_URL: process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: prefix,
    CASE_STORE: 'none',
  });
  const quietly = async <T>(fn: () => Promise<T>): Promise<T> => {
    const log = console.log;
    console.log = () => undefined;
    try {
      return await fn();
    } finally {
      console.log = log;
    }
  };

  it("--user deletes that user's list and no other; --hash finds a list too", async () => {
    const hash = await hashFromConfig(config);
    const store = new RedisRecentDecisionStore(() => redis, { perUser: 20, ttlMs: 86_400_000, prefix });
    await store.add(
      new Map([
        [hash.of('user-gone'), [entry('tx-g1', 1), entry('tx-g2', 2)]],
        [hash.of('user-stays'), [entry('tx-s1', 3)]],
        [hash.of('user-by-hash'), [entry('tx-h1', 4)]],
      ]),
    );
    const erased = await quietly(() => eraseCommand(['--user', 'user-gone'], config));
    assert.equal(erased.recent, true);
    assert.equal(await redis.exists(recentKey(prefix, hash.of('user-gone'))), 0);
    assert.deepEqual(
      (await store.read(hash.of('user-stays'))).map((e) => e.transactionId),
      ['tx-s1'],
    );
    const again = await quietly(() => eraseCommand(['--user', 'user-gone'], config));
    assert.equal(again.recent, false, 'nothing left to erase');
    const byHash = await quietly(() => eraseCommand(['--hash', hash.of('user-by-hash')], config));
    assert.equal(byHash.recent, true);
    assert.equal(await redis.exists(recentKey(prefix, hash.of('user-by-hash'))), 0);
  });

  it('without Redis configured there is no list to delete', async () => {
    const local = testConfig({ CASE_STORE: 'none' });
    const erased = await quietly(() => eraseCommand(['--user', 'user-gone'], local));
    assert.equal(erased.recent, undefined);
  });
});
