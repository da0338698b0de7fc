/**
 * The case page's recent payments under `npm start` (PGlite, the development identity), on the in-process store and
 * on Redis (a key prefix of its own: one list, under the hash and never the raw id, with its TTL): one user's
 * payments scored through the app, one the shipped ruleset holds for review, then two decided without review
 * (approved or declined); the case of the held one answers the user's recent decided payments, newest first, the
 * case's own included, with how long they are kept; the raw user id is in no log line.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { encodePrincipal } from '../../lib/identity/principal';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';

interface RecentBody {
  transactionId: string;
  decision: string;
  amount: number;
  currency: string;
  merchantId: string;
  score: number | null;
  rules: string[];
  decidedAt: string;
}

const redisUrl = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const redisPrefix = `test:${randomUUID()}:`;

for (const store of ['in process', 'redis'] as const)
  describe(`recent payments on the case page, under npm start (${store})`, () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'test-recent-http-'));
    let host: LocalHost;
    const user = 'user-recent-7781';
    const analyst = { 'x-ms-client-principal': encodePrincipal('ana', ['analyst']) };
    const score = async (body: Record<string, unknown>): Promise<string> => {
      const res = await fetch(`${host.url}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 200);
      return ((await res.json()) as { decision: string }).decision;
    };

    before(async () => {
      host = await startCaseHost(dir, store === 'redis' ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: redisPrefix } : {});
    });
    after(async () => {
      await stopChild(host.child, 'npm start to exit after SIGTERM');
      rmSync(dir, { recursive: true, force: true });
      if (store === 'redis') {
        const redis = new Redis(redisUrl);
        const keys = await redis.keys(`${redisPrefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      }
    });

    it('the case answers the user’s held and decided payments, newest first', async () => {
      // the shipped ruleset holds a large payment from a device the user has not used before; then two small ones
      const held = await score(
        validEvent({ transactionId: 'tx-rp-1', userId: user, amount: 2500, deviceId: 'dev-never-seen' }),
      );
      assert.equal(held, 'review');
      const second = await score(validEvent({ transactionId: 'tx-rp-2', userId: user, amount: 20 }));
      const third = await score(validEvent({ transactionId: 'tx-rp-3', userId: user, amount: 35.5 }));
      assert.ok(
        [second, third].every((d) => d === 'approve' || d === 'decline'),
        `decided without review: ${second}, ${third}`,
      );

      const search = async (): Promise<{ id: string }[]> => {
        const res = await fetch(`${host.url}/cases/search`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...analyst },
          body: JSON.stringify({ transactionId: 'tx-rp-1' }),
        });
        assert.equal(res.status, 200);
        return ((await res.json()) as { cases: { id: string }[] }).cases;
      };
      const [found] = await eventually(search, (cs) => cs.length === 1, 'the case of tx-rp-1');
      const detail = await eventually(
        async () => {
          const res = await fetch(`${host.url}/cases/${found?.id ?? ''}`, { headers: analyst });
          assert.equal(res.status, 200);
          return (await res.json()) as { recentPayments?: RecentBody[]; recentPaymentsKeptDays?: number };
        },
        (d) => (d.recentPayments?.length ?? 0) >= 3,
        'the three recent payments',
      );
      assert.deepEqual(
        detail.recentPayments?.map((p) => [p.transactionId, p.decision, p.amount, p.currency, p.merchantId]),
        [
          ['tx-rp-3', third, 35.5, 'EUR', 'm-991'],
          ['tx-rp-2', second, 20, 'EUR', 'm-991'],
          ['tx-rp-1', 'review', 2500, 'EUR', 'm-991'],
        ],
        'newest first, the case’s own payment included',
      );
      assert.deepEqual(detail.recentPayments?.[2]?.rules, ['large-amount-new-device']);
      assert.ok(
        detail.recentPayments?.every((p) => typeof p.score === 'number' && !Number.isNaN(Date.parse(p.decidedAt))),
      );
      assert.equal(detail.recentPaymentsKeptDays, 30);
      assert.ok(!host.output().includes(user), 'the user id reaches no log line');
      if (store === 'redis') {
        const redis = new Redis(redisUrl);
        try {
          const keys = await redis.keys(`${redisPrefix}recent:*`);
          assert.equal(keys.length, 1, 'one list: this user');
          assert.ok(!keys.some((k) => k.includes(user)), `no key holds the raw user id: ${keys.join(', ')}`);
          assert.equal(await redis.llen(keys[0] ?? ''), 3);
          assert.ok((await redis.pttl(keys[0] ?? '')) > 29 * 86_400_000, 'the TTL is set');
        } finally {
          redis.disconnect();
        }
      }
    });
  });
