/**
 * The case answer's `lists` (PGlite): for a lead on a case not closed, the lists the active ruleset declares, by
 * name with the payment field each is keyed by (the console's pick-list for a verdict's `addToList`); none for an
 * analyst or on a closed case; an empty list without a ruleset. A list picked from them is added at the verdict.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listOptions } from '../../lib/cases/case-lists';
import { CaseService, type CaseLists, type Lookup } from '../../lib/cases/case-service';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { AppError } from '../../lib/errors/errors';
import { Identity } from '../../lib/identity/identity';
import { encodePrincipal } from '../../lib/identity/principal';
import { newCase, pgliteDb } from './support';
import { SHARED_WITH_CASES } from '../support/case-database';

const T0 = Date.parse('2026-12-01T09:00:00Z');

const as = (name: string, roles: string[]): Lookup => {
  const h: Record<string, string> = { 'x-ms-client-principal': encodePrincipal(name, roles) };
  return { get: (k: string) => h[k.toLowerCase()] ?? null };
};
const LEAD = as('lee', ['lead']);
const ANALYST = as('ana', ['analyst']);

/** The decisioning's shape as the case service reads it: the active ruleset's declared lists. */
function declared(lists: Record<string, string> | undefined): CaseLists & { added: string[] } {
  const map = lists === undefined ? undefined : new Map(Object.entries(lists));
  const added: string[] = [];
  return {
    added,
    ruleset: map === undefined ? undefined : { lists: map },
    listKey: (name) => {
      const key = map?.get(name);
      if (key === undefined) throw new AppError('not_found', `No list ${name}.`);
      return key;
    },
    addToList: (name) => {
      added.push(name);
      return Promise.resolve({});
    },
  };
}

describe('the lists a case answer offers a lead', () => {
  const db = pgliteDb();
  let store: SqlCaseStore;
  before(async () => {
    store = await SqlCaseStore.create(await db.client(), undefined, SHARED_WITH_CASES);
    await store.open(
      [newCase('tx-l1', T0, {}, { userId: 'u-1' }), newCase('tx-l2', T0 + 1, {}, { userId: 'u-2' })],
      T0,
    );
  });
  after(async () => {
    await store.dispose();
    await db.cleanup();
  });
  const service = (lists: CaseLists | undefined): CaseService =>
    new CaseService({
      store,
      identity: new Identity({ mode: 'development', devActor: { name: 'dev', roles: ['analyst'] } }),
      wallClock: () => T0 + 60_000,
      ...(lists === undefined ? {} : { lists }),
    });
  const idOf = async (tx: string): Promise<string> =>
    (await store.list({}, 'oldest', 100)).cases.find((c) => c.transactionId === tx)?.id ?? '';

  it('a lead on an open case: the declared lists, by name, with their key field', async () => {
    const s = service(declared({ blocked_users: 'userId', blocked_cards: 'cardFingerprint' }));
    const d = await s.get(LEAD, await idOf('tx-l1'));
    assert.deepEqual(d.lists, [
      { name: 'blocked_cards', key: 'cardFingerprint' },
      { name: 'blocked_users', key: 'userId' },
    ]);
  });

  it('an analyst gets none (adding to a list needs the role lead)', async () => {
    const s = service(declared({ blocked_users: 'userId' }));
    const d = await s.get(ANALYST, await idOf('tx-l1'));
    assert.equal(d.lists, undefined);
  });

  it('without a ruleset, or without the lists path, a lead gets an empty list', async () => {
    assert.deepEqual((await service(declared(undefined)).get(LEAD, await idOf('tx-l1'))).lists, []);
    assert.deepEqual((await service(undefined).get(LEAD, await idOf('tx-l1'))).lists, []);
    assert.deepEqual(listOptions(undefined), []);
  });

  it('a list picked from them is taken by the verdict; on the closed case none is offered', async () => {
    const lists = declared({ blocked_users: 'userId' });
    const s = service(lists);
    const id = await idOf('tx-l2');
    const picked = (await s.get(LEAD, id)).lists?.[0]?.name ?? '';
    const v = await s.verdictChange(LEAD, id, { verdict: 'fraud', addToList: { list: picked } });
    assert.equal(v.list, 'blocked_users');
    assert.equal((await s.get(LEAD, id)).lists, undefined, 'closed: nothing to add to');
  });
});
