/**
 * The in-process recent-decisions store: the shared contract (recent-decisions-contract.ts), then what only it
 * has: entries gone once the TTL passes (on a test clock), and at most `maxUsers` users (the least recently written
 * forgotten first).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRecentDecisionStore } from '../../lib/learning/recent-decisions-store';
import { CONTRACT_BOUNDS, entry, recentStoreContract } from './recent-decisions-contract';

recentStoreContract('in process', () => {
  const store = new MemoryRecentDecisionStore({ ...CONTRACT_BOUNDS, maxUsers: 1000 });
  return Promise.resolve({
    store,
    remainingMs: (u: string) => {
      const at = store.expiresAt(u);
      return Promise.resolve(at === undefined ? undefined : at - Date.now());
    },
    keys: () => Promise.resolve(store.keys()),
    cleanup: () => Promise.resolve(),
  });
});

describe('recent decisions in process: TTL and the users bound', () => {
  it("a user's entries are gone once the TTL has passed since the last write", async () => {
    let now = Date.parse('2026-12-01T00:00:00Z');
    const store = new MemoryRecentDecisionStore({ perUser: 3, ttlMs: 1000, maxUsers: 10, wallClock: () => now });
    await store.add(new Map([['h_a', [entry('tx-1', 1)]]]));
    now += 900;
    await store.add(new Map([['h_a', [entry('tx-2', 2)]]]));
    now += 900;
    assert.equal((await store.read('h_a')).length, 2, 'the second write renewed the TTL');
    now += 101;
    assert.deepEqual(await store.read('h_a'), []);
    assert.deepEqual(store.keys(), [], 'an expired user is deleted when read');
  });

  it('keeps at most maxUsers users, forgetting the least recently written', async () => {
    const store = new MemoryRecentDecisionStore({ perUser: 3, ttlMs: 60_000, maxUsers: 2 });
    await store.add(new Map([['h_1', [entry('tx-1', 1)]]]));
    await store.add(new Map([['h_2', [entry('tx-2', 2)]]]));
    await store.add(new Map([['h_3', [entry('tx-3', 3)]]]));
    assert.deepEqual(store.keys().sort(), ['h_2', 'h_3']);
  });
});
