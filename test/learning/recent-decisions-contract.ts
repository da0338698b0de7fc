/**
 * The one contract of the recent-decisions stores (lib/learning/recent-decisions-store.ts), run on the in-process
 * store (recent-decisions-memory.test.ts) and on Redis (recent-decisions-redis.test.ts): at most `perUser` entries,
 * newest first, across batches and within one; users apart; a TTL set on every write; erase; keys hold the keyed
 * hash, never the raw user id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KeyedHash } from '../../lib/platform/keyed-hash';
import type { RecentDecision, RecentDecisionStore } from '../../lib/learning/recent-decisions-store';

/** The bounds every store of the suite is made with. */
export const CONTRACT_BOUNDS = { perUser: 5, ttlMs: 30 * 86_400_000 } as const;

/** One store under test, and what the suite reads beside its interface. */
export interface RecentHarness {
  readonly store: RecentDecisionStore;
  /** How long the user's entries still live, ms (`undefined`: none kept). */
  remainingMs(userHash: string): Promise<number | undefined>;
  /** Every key (or key name) the store holds. */
  keys(): Promise<string[]>;
  cleanup(): Promise<void>;
}

const hash = new KeyedHash('contract-suite-hash-key-0123456789');
const T0 = Date.parse('2026-12-01T09:00:00Z');

/** An entry of transaction `tx` decided `i` seconds after T0. */
export function entry(tx: string, i: number, decision = 'approve'): RecentDecision {
  return {
    transactionId: tx,
    decidedAt: new Date(T0 + i * 1000).toISOString(),
    amount: 10 + i,
    currency: 'EUR',
    merchantId: 'm-1',
    decision,
    score: i % 2 === 0 ? 0.125 : null,
    rules: i % 3 === 0 ? ['velocity-high', 'new-device'] : [],
    modelVersion: '1.0.0',
  };
}

/** Runs the contract on the stores `make` opens (one per suite). */
export function recentStoreContract(name: string, make: () => Promise<RecentHarness>): void {
  describe(`recent decisions store contract: ${name}`, () => {
    let h: RecentHarness;
    before(async () => {
      h = await make();
    });
    after(async () => {
      await h.store.dispose();
      await h.cleanup();
    });

    it('keeps the newest perUser entries, newest first, across batches and within one', async () => {
      const u = hash.of('user-bounded');
      await h.store.add(new Map([[u, [entry('tx-0', 0), entry('tx-1', 1), entry('tx-2', 2)]]]));
      assert.deepEqual(
        (await h.store.read(u)).map((e) => e.transactionId),
        ['tx-2', 'tx-1', 'tx-0'],
      );
      await h.store.add(new Map([[u, [3, 4, 5, 6].map((i) => entry(`tx-${i}`, i))]]));
      const kept = await h.store.read(u);
      assert.deepEqual(
        kept.map((e) => e.transactionId),
        ['tx-6', 'tx-5', 'tx-4', 'tx-3', 'tx-2'],
        'perUser (5) kept, the oldest forgotten',
      );
      assert.deepEqual(kept[4], entry('tx-2', 2), 'every field read back as written');
      assert.deepEqual(kept[2], entry('tx-4', 4, 'approve'));
    });

    it("keeps users apart; an unknown user's list is empty", async () => {
      const a = hash.of('user-a');
      const b = hash.of('user-b');
      await h.store.add(
        new Map([
          [a, [entry('tx-a', 1, 'decline')]],
          [b, [entry('tx-b', 2, 'review')]],
        ]),
      );
      assert.deepEqual(
        (await h.store.read(a)).map((e) => [e.transactionId, e.decision]),
        [['tx-a', 'decline']],
      );
      assert.deepEqual(
        (await h.store.read(b)).map((e) => [e.transactionId, e.decision]),
        [['tx-b', 'review']],
      );
      assert.deepEqual(await h.store.read(hash.of('user-nobody')), []);
    });

    it('sets the TTL on every write', async () => {
      const u = hash.of('user-ttl');
      assert.equal(await h.remainingMs(u), undefined);
      await h.store.add(new Map([[u, [entry('tx-t', 1)]]]));
      const left = await h.remainingMs(u);
      assert.ok(
        left !== undefined && left > CONTRACT_BOUNDS.ttlMs - 60_000 && left <= CONTRACT_BOUNDS.ttlMs,
        `${left}`,
      );
    });

    it('erase deletes one user only, and says whether there was anything', async () => {
      const u = hash.of('user-erased');
      const other = hash.of('user-kept');
      await h.store.add(
        new Map([
          [u, [entry('tx-e', 1)]],
          [other, [entry('tx-k', 1)]],
        ]),
      );
      assert.equal(await h.store.erase(u), true);
      assert.deepEqual(await h.store.read(u), []);
      assert.equal(await h.store.erase(u), false);
      assert.equal((await h.store.read(other)).length, 1);
    });

    it('holds the keyed hash of the user id, never the raw id', async () => {
      const raw = 'user-raw-id-4711';
      await h.store.add(new Map([[hash.of(raw), [entry('tx-r', 1)]]]));
      const keys = await h.keys();
      assert.ok(
        keys.some((k) => k.includes(hash.of(raw))),
        'the hash is a key',
      );
      assert.ok(!keys.some((k) => k.includes(raw)), `no key holds the raw id: ${keys.join(', ')}`);
    });
  });
}
