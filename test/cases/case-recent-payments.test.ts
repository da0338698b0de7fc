/**
 * The case answer's `recentPayments` (PGlite): the reader's entries for the case's user, as read; when the reader
 * cannot answer (`undefined`, as when Redis is down or slow) or throws, the case still answers, without
 * `recentPayments` and with `recentPaymentsKeptDays`; without a reader neither field is there; every worker who may
 * see the case sees them, and no one else.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CaseService, type Lookup } from '../../lib/cases/case-service';
import type { RecentPayments } from '../../lib/cases/case-service-types';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { Identity } from '../../lib/identity/identity';
import { encodePrincipal } from '../../lib/identity/principal';
import { SHARED_WITH_CASES } from '../support/case-database';
import { entry } from '../learning/recent-decisions-contract';
import { newCase, pgliteDb } from './support';

const T0 = Date.parse('2026-12-01T09:00:00Z');
const DAY = 86_400_000;

const as = (name: string, roles: string[]): Lookup => {
  const h: Record<string, string> = { 'x-ms-client-principal': encodePrincipal(name, roles) };
  return { get: (k: string) => h[k.toLowerCase()] ?? null };
};

describe("the case answer's recent payments", () => {
  const db = pgliteDb();
  let store: SqlCaseStore;
  let id = '';
  before(async () => {
    store = await SqlCaseStore.create(await db.client(), undefined, SHARED_WITH_CASES);
    await store.open([newCase('tx-rc1', T0, {}, { userId: 'u-recent' })], T0);
    id = (await store.list({}, 'oldest', 10)).cases[0]?.id ?? '';
  });
  after(async () => {
    await store.dispose();
    await db.cleanup();
  });
  const service = (recent: RecentPayments | undefined): CaseService =>
    new CaseService({
      store,
      identity: new Identity({ mode: 'easyauth', devActor: { name: 'dev', roles: [] } }),
      wallClock: () => T0 + 60_000,
      ...(recent === undefined ? {} : { recent }),
    });

  it("answers the reader's entries for the case's user, and how long they are kept", async () => {
    const asked: string[] = [];
    const entries = [entry('tx-rc2', 2, 'decline'), entry('tx-rc1', 1, 'review')];
    const d = await service({
      forUser: (u) => {
        asked.push(u);
        return Promise.resolve(entries);
      },
      ttlMs: 30 * DAY,
    }).get(as('ana', ['analyst']), id);
    assert.deepEqual(asked, ['u-recent']);
    assert.deepEqual(d.recentPayments, entries);
    assert.equal(d.recentPaymentsKeptDays, 30);
  });

  it('a reader that cannot answer, or throws: the case answers without them', async () => {
    const down = await service({ forUser: () => Promise.resolve(undefined), ttlMs: 7 * DAY }).get(
      as('ana', ['analyst']),
      id,
    );
    assert.equal(down.case.id, id);
    assert.equal(down.recentPayments, undefined);
    assert.equal(down.recentPaymentsKeptDays, 7);
    const throwing = await service({ forUser: () => Promise.reject(new Error('down')), ttlMs: 7 * DAY }).get(
      as('lee', ['lead']),
      id,
    );
    assert.equal(throwing.recentPayments, undefined);
  });

  it('without a reader neither field; someone who may not see the case sees none of it', async () => {
    const none = await service(undefined).get(as('ana', ['analyst']), id);
    assert.equal(none.recentPayments, undefined);
    assert.equal(none.recentPaymentsKeptDays, undefined);
    let read = 0;
    const s = service({
      forUser: () => {
        read++;
        return Promise.resolve([]);
      },
      ttlMs: DAY,
    });
    await assert.rejects(s.get(as('viewer', ['reader']), id), (e: Error & { code?: string }) => e.code === 'forbidden');
    assert.equal(read, 0, 'nothing read for a caller the case refuses');
  });
});
