/**
 * One contract for the case store on the real PostgreSQL server (127.0.0.1:5432, database `test`, a fresh schema
 * per run) and on PGlite (a temporary folder): migrations from empty and once, one case per transaction, the queue
 * (`next` never hands a case out twice, even to concurrent callers), notes, verdicts (atomic with their outbox rows
 * and audit row: a failure inside the transaction leaves nothing; the same verdict again writes nothing), paging,
 * ids in decision order, erasure, retention.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CaseSignals } from '../../lib/cases/case-signals';
import type { Case, CaseStore, CloseStep, NewCase } from '../../lib/cases/case-store';
import type { SqlClient } from '../../lib/platform/sql/sql-client';
import { migrate, schemaOf } from '../../lib/platform/sql/migrate';
import { CASE_DATABASE, SHARED_WITH_CASES } from '../support/case-database';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { newCase, pgliteDb, serverDb, suiteStore, type TestDb } from './support';

const T0 = Date.parse('2026-12-01T08:00:00Z');
const MIN = 60_000;

for (const make of [serverDb, pgliteDb]) {
  const db: TestDb = make();
  describe(`case store contract: ${db.name}`, () => {
    let store: CaseStore;
    let sql: SqlClient;
    before(async () => {
      const client = await db.client();
      sql = client;
      assert.deepEqual(
        await migrate(client, CASE_DATABASE),
        schemaOf(CASE_DATABASE).map((m) => m.version),
        'every migration applies from empty',
      );
      assert.deepEqual(await migrate(client, CASE_DATABASE), [], 'a second run applies nothing');
      store = await SqlCaseStore.create(client, undefined, SHARED_WITH_CASES);
    });
    after(async () => {
      await store.dispose();
      await db.cleanup();
    });

    it('opens one case per transaction, whatever the batches', async () => {
      assert.equal(await store.open([newCase('o-1', T0), newCase('o-2', T0 + 1), newCase('o-1', T0 + 2)], T0), 2);
      assert.equal(await store.open([newCase('o-1', T0 + 3), newCase('o-3', T0 + 4)], T0), 1);
      const page = await store.list({ merchantId: 'm-1' }, 'oldest', 100);
      assert.deepEqual(
        page.cases.filter((c) => c.transactionId.startsWith('o-')).map((c) => c.transactionId),
        ['o-1', 'o-2', 'o-3'],
      );
      const first = page.cases.find((c) => c.transactionId === 'o-1');
      assert.ok(first !== undefined);
      // the console's search: by transaction id, by user id (exact)
      assert.deepEqual(
        (await store.list({ transactionId: 'o-2' }, 'oldest', 100)).cases.map((c) => c.transactionId),
        ['o-2'],
      );
      assert.deepEqual((await store.list({ transactionId: 'o-' }, 'oldest', 100)).cases, []);
      const user = String(first.payment.userId);
      assert.ok((await store.list({ userId: user }, 'oldest', 100)).cases.every((c) => c.payment.userId === user));
      assert.ok((await store.list({ userId: user }, 'oldest', 100)).cases.some((c) => c.transactionId === 'o-1'));
      assert.equal(first.decidedAt, new Date(T0).toISOString(), 'the first report wins');
      const got = await store.get(first.id);
      assert.equal(got?.case.payment.amount, 1500);
      assert.equal(got?.case.state, 'open');
      assert.deepEqual(got?.case.rules, [{ id: 'large-amount-new-device', action: 'review' }]);
      assert.deepEqual(got?.case.model, { name: 'fraud', version: '1.0.0' });
      assert.deepEqual(got?.case.ruleset, { name: 'fraud-rules', version: '1.0.0' });
      assert.deepEqual(
        got?.events.map((e) => [e.action, e.actor]),
        [['opened', 'system']],
      );
    });

    it('ids follow decision order, within a batch and across batches', async () => {
      const at = (tx: string, t: number): NewCase => newCase(tx, t, {}, { merchantId: 'm-order' });
      assert.equal(await store.open([at('id-1', T0 + 1), at('id-2', T0 + 2), at('id-3', T0 + 3)], T0), 3);
      // a batch out of decision order (the first report of id-5 wins), then equal times (the batch's order)
      assert.equal(await store.open([at('id-5', T0 + 5), at('id-4', T0 + 4), at('id-5', T0 + 3)], T0), 2);
      assert.equal(await store.open([at('id-6', T0 + 6), at('id-7', T0 + 6), at('id-8', T0 + 6)], T0), 3);
      const cases = (await store.list({ merchantId: 'm-order' }, 'oldest', 100)).cases;
      assert.deepEqual(
        cases.map((c) => c.transactionId),
        ['id-1', 'id-2', 'id-3', 'id-4', 'id-5', 'id-6', 'id-7', 'id-8'],
      );
      const ids = cases.map((c) => BigInt(c.id));
      assert.ok(
        ids.every((id, i) => i === 0 || id > (ids[i - 1] ?? id)),
        `ids ascend oldest first: ${ids.join(', ')}`,
      );
    });

    it('next hands out the oldest open unassigned case, records who took it, and nothing when none is left', async () => {
      await store.open([newCase('n-2', T0 - 10 * MIN), newCase('n-1', T0 - 20 * MIN)], T0);
      const a = await store.next('alice', T0 + MIN);
      assert.equal(a?.transactionId, 'n-1');
      assert.equal(a?.state, 'assigned');
      assert.equal(a?.assignee, 'alice');
      const b = await store.next('bob', T0 + MIN);
      assert.equal(b?.transactionId, 'n-2');
      const events = (await store.get(a?.id ?? '0'))?.events ?? [];
      assert.deepEqual(
        events.map((e) => [e.action, e.actor, e.at]),
        [
          ['opened', 'system', new Date(T0).toISOString()],
          ['assigned', 'alice', new Date(T0 + MIN).toISOString()],
        ],
      );
      // drain the rest, then none
      while ((await store.next('carol', T0)) !== undefined);
      assert.equal(await store.next('carol', T0), undefined);
    });

    it('notes, a verdict closes the case, and a closed case changes no more', async () => {
      await store.open([newCase('v-1', T0)], T0);
      const c = (await store.list({ status: 'open' }, 'oldest', 10)).cases.find((x) => x.transactionId === 'v-1');
      assert.ok(c !== undefined);
      const noted = await store.addNote(c.id, 'alice', 'called the customer', T0 + 1);
      assert.equal(noted.ok, true);
      const closed = await store.close(c.id, 'alice', 'fraud', 'confirmed', T0 + 2);
      assert.ok(closed.ok);
      assert.equal(closed.case.state, 'closed');
      assert.equal(closed.case.verdict, 'fraud');
      assert.equal(closed.case.verdictReason, 'confirmed');
      assert.equal(closed.case.closedBy, 'alice');
      assert.deepEqual(await store.close(c.id, 'bob', 'legit', undefined, T0 + 3), { ok: false, why: 'closed' });
      const repeat = await store.close(c.id, 'bob', 'fraud', 'confirmed', T0 + 3);
      assert.ok(repeat.ok && repeat.repeated, 'the same verdict again is a repeat');
      assert.equal(repeat.case.closedBy, 'alice');
      assert.deepEqual(await store.assign(c.id, 'lead', 'bob', T0 + 3), { ok: false, why: 'closed' });
      assert.deepEqual(await store.close('999999999', 'bob', 'legit', undefined, T0), { ok: false, why: 'not_found' });
      const events = (await store.get(c.id))?.events ?? [];
      assert.deepEqual(
        events.map((e) => [e.action, e.actor, e.detail]),
        [
          ['opened', 'system', undefined],
          ['note', 'alice', { text: 'called the customer' }],
          ['verdict', 'alice', { verdict: 'fraud', reason: 'confirmed' }],
        ],
      );
    });

    /** A fresh open case of transaction `tx`. */
    const opened = async (tx: string): Promise<Case> => {
      await store.open([newCase(tx, T0)], T0);
      const c = (await store.list({ status: 'open' }, 'oldest', 1000)).cases.find((x) => x.transactionId === tx);
      assert.ok(c !== undefined, `the case of ${tx}`);
      return c;
    };
    const count = async (table: 'case_outbox' | 'audit_events', caseId: string): Promise<number> => {
      const where = table === 'case_outbox' ? 'case_id = $1::bigint' : `kind = 'case' AND name = $1`;
      const rows = await sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, [caseId]);
      return Number(rows[0]?.['n']);
    };
    /** A step writing what a verdict writes: the label to the outbox, an audit row on the transaction. */
    const verdictStep =
      (fail?: string): CloseStep =>
      async (t, c) => {
        await t.enqueue({
          kind: 'label',
          payload: {
            transactionId: c.prior.transactionId,
            label: 'fraud',
            reportedAt: '2026-12-01T08:00:00Z',
            source: 'case',
          },
        });
        await t.query(
          `INSERT INTO audit_events (at, actor, kind, name, action) VALUES (now(), 'alice', 'case', $1, 'verdict')`,
          [c.case.id],
        );
        assert.equal(c.case.state, 'closed', 'the step runs after the update');
        assert.notEqual(c.prior.state, 'closed');
        if (fail !== undefined) throw new Error(fail);
      };

    it('a verdict whose step fails after the update leaves nothing: case open, no outbox row, no audit row', async () => {
      const c = await opened('e-1');
      await assert.rejects(
        store.close(c.id, 'alice', 'fraud', undefined, T0, verdictStep('audit insert failed')),
        /audit insert failed/,
      );
      const got = await store.get(c.id);
      assert.equal(got?.case.state, 'open', 'the case is as it was');
      assert.deepEqual(
        got?.events.map((e) => e.action),
        ['opened'],
        'no verdict event',
      );
      assert.equal(await count('case_outbox', c.id), 0, 'no label in the outbox');
      assert.equal(await count('audit_events', c.id), 0, 'no audit row');

      // the database itself refusing the update (a NUL byte in the reason) leaves nothing either
      await assert.rejects(store.close(c.id, 'alice', 'fraud', 'bad\u0000reason', T0, verdictStep()));
      assert.equal((await store.get(c.id))?.case.state, 'open');
      assert.equal(await count('case_outbox', c.id), 0);
      assert.equal(await count('audit_events', c.id), 0);

      // the retry commits the close, its label and its audit row together
      const r = await store.close(c.id, 'alice', 'fraud', 'confirmed', T0 + 1, verdictStep());
      assert.ok(r.ok && !r.repeated);
      assert.equal(r.prior.state, 'open');
      assert.equal(await count('case_outbox', c.id), 1);
      assert.equal(await count('audit_events', c.id), 1);
    });

    it('the same verdict again answers the closed case and writes nothing; another verdict is refused', async () => {
      const c = await opened('i-1');
      const first = await store.close(c.id, 'alice', 'fraud', 'confirmed', T0, verdictStep());
      assert.ok(first.ok && !first.repeated);
      let ran = 0;
      const again = await store.close(c.id, 'bob', 'fraud', 'confirmed', T0 + MIN, async () => void ran++);
      assert.ok(again.ok && again.repeated, 'the same verdict and reason: repeated');
      assert.deepEqual(again.case, first.case, 'the case as the first verdict closed it');
      assert.equal(ran, 0, 'no step runs for a repeat');
      assert.equal(await count('case_outbox', c.id), 1, 'one label');
      assert.equal(await count('audit_events', c.id), 1, 'one audit row');
      assert.deepEqual(await store.close(c.id, 'bob', 'fraud', 'other reason', T0, verdictStep()), {
        ok: false,
        why: 'closed',
      });
      assert.deepEqual(await store.close(c.id, 'bob', 'fraud', undefined, T0, verdictStep()), {
        ok: false,
        why: 'closed',
      });
      assert.deepEqual(await store.close(c.id, 'bob', 'legit', 'confirmed', T0, verdictStep()), {
        ok: false,
        why: 'closed',
      });
      const events = (await store.get(c.id))?.events ?? [];
      assert.equal(events.filter((e) => e.action === 'verdict').length, 1);
      assert.equal(await count('case_outbox', c.id), 1);
      assert.equal(await count('audit_events', c.id), 1);
    });

    it('of two verdicts at once, one wins and only its step runs; the same two at once are one verdict', async () => {
      const c = await opened('e-2');
      const ran: string[] = [];
      const step =
        (who: string): CloseStep =>
        async (t, x) => {
          await verdictStep()(t, x);
          ran.push(who);
          await new Promise((r) => setImmediate(r));
        };
      const [a, b] = await Promise.all([
        store.close(c.id, 'alice', 'fraud', undefined, T0 + 1, step('alice')),
        store.close(c.id, 'bob', 'legit', undefined, T0 + 2, step('bob')),
      ]);
      assert.equal([a, b].filter((x) => x.ok).length, 1, 'one verdict wins');
      assert.deepEqual(
        [a, b].find((x) => !x.ok),
        { ok: false, why: 'closed' },
      );
      assert.equal(ran.length, 1, "only the winner's step ran");
      assert.equal(await count('case_outbox', c.id), 1);

      const d = await opened('e-3');
      const same = await Promise.all([
        store.close(d.id, 'alice', 'legit', 'ok', T0, step('a')),
        store.close(d.id, 'alice', 'legit', 'ok', T0, step('b')),
      ]);
      assert.deepEqual(
        same.map((x) => x.ok && x.repeated).sort(),
        [false, true],
        'one closes, the retry racing it is a repeat',
      );
      assert.equal(await count('case_outbox', d.id), 1);
      assert.equal(await count('audit_events', d.id), 1);
    });

    it('a lead reassigns an open case', async () => {
      await store.open([newCase('r-1', T0)], T0);
      const c = (await store.list({ rule: 'large-amount-new-device' }, 'newest', 100)).cases.find(
        (x) => x.transactionId === 'r-1',
      );
      assert.ok(c !== undefined);
      const r = await store.assign(c.id, 'lead-1', 'dave', T0 + 1);
      assert.ok(r.ok);
      assert.equal(r.case.assignee, 'dave');
      assert.equal(r.case.state, 'assigned');
    });

    it('filters, and pages with keyset positions in both orders without gaps or repeats', async () => {
      const cases = Array.from({ length: 25 }, (_, i) =>
        newCase(`p-${i}`, T0 + i * MIN, { score: i / 100 }, { merchantId: 'm-paging' }),
      );
      await store.open(cases, T0);
      for (const order of ['oldest', 'newest'] as const) {
        const seen: string[] = [];
        let after;
        for (let guard = 0; guard < 10; guard++) {
          const page = await store.list({ merchantId: 'm-paging' }, order, 10, after);
          seen.push(...page.cases.map((c) => c.transactionId));
          if (page.next === undefined) break;
          after = page.next;
        }
        const expected = cases.map((c) => c.transactionId);
        assert.deepEqual(seen, order === 'oldest' ? expected : [...expected].reverse(), order);
      }
      const scored = await store.list({ merchantId: 'm-paging', minScore: 0.2 }, 'oldest', 100);
      assert.equal(scored.cases.length, 5);
      const older = await store.list({ merchantId: 'm-paging', decidedBefore: T0 + 3 * MIN }, 'oldest', 100);
      assert.deepEqual(
        older.cases.map((c) => c.transactionId),
        ['p-0', 'p-1', 'p-2'],
      );
      assert.equal((await store.list({ merchantId: 'm-paging', rule: 'no-such-rule' }, 'oldest', 100)).cases.length, 0);
    });

    it("shows a user's other cases, erases a user's cases, and deletes cases past retention", async () => {
      await store.open(
        [
          newCase('u-1', T0 - 1000 * MIN, {}, { userId: 'user-erase' }),
          newCase('u-2', T0, {}, { userId: 'user-erase' }),
          newCase('u-3', T0 - 2000 * MIN, {}, { userId: 'user-old' }),
        ],
        T0,
      );
      const all = (await store.list({}, 'newest', 1000)).cases;
      const u2 = all.find((c) => c.transactionId === 'u-2');
      assert.ok(u2 !== undefined);
      assert.deepEqual(
        (await store.userCases('user-erase', u2.id, 10)).map((c) => c.transactionId),
        ['u-1'],
      );
      assert.equal(await store.eraseUser('user-erase'), 2);
      assert.equal(await store.get(u2.id), undefined);
      assert.equal(await store.deleteDecidedBefore(T0 - 1500 * MIN), 1);
      assert.equal((await store.list({}, 'oldest', 1000)).cases.filter((c) => c.transactionId === 'u-3').length, 0);
      const stats = await store.openStats();
      assert.ok(stats.open >= 1);
    });

    it('concurrent next calls never hand out one case twice (20 callers over 30 open cases)', async () => {
      while ((await store.next('drain', T0)) !== undefined);
      await store.open(
        Array.from({ length: 30 }, (_, i) => newCase(`c20-${i}`, T0 + i)),
        T0,
      );
      const got = await Promise.all(Array.from({ length: 20 }, (_, i) => store.next(`analyst-${i}`, T0)));
      const ids = got.map((c) => c?.id);
      assert.equal(ids.filter((id) => id !== undefined).length, 20, 'every caller got a case');
      assert.equal(new Set(ids).size, 20, 'twenty distinct cases');
    });
  });
}

describe('case store contract: postgres server, 200 concurrent next over 1000 open cases', () => {
  const s = suiteStore(serverDb());

  it('hands out 200 distinct cases (FOR UPDATE SKIP LOCKED over a pool of 30 connections)', async () => {
    for (let i = 0; i < 1000; i += 200)
      await s.store.open(
        Array.from({ length: 200 }, (_, j) => newCase(`k-${i + j}`, T0 + i + j)),
        T0,
      );
    const got = await Promise.all(Array.from({ length: 200 }, (_, i) => s.store.next(`analyst-${i}`, T0)));
    const ids = got.map((c) => c?.id);
    assert.equal(ids.filter((id) => id !== undefined).length, 200, 'every caller got a case');
    assert.equal(new Set(ids).size, 200, '200 distinct cases');
    const states = await Promise.all(got.map((c) => s.store.get(c?.id ?? '0')));
    assert.ok(
      states.every((s, i) => s?.case.assignee === `analyst-${i}`),
      'each case is assigned to its caller',
    );
    assert.equal((await s.store.list({ status: 'open' }, 'oldest', 1000)).cases.length, 800);
  });
});

for (const make of [serverDb, pgliteDb]) {
  const db = make();
  describe(`case store contract: ${db.name}, signals`, () => {
    const s = suiteStore(db);
    it("keeps a case's signals and answers them with the case only; a case opened without them has none", async () => {
      const signals: CaseSignals = {
        version: { name: 'default', version: '1.1.0' },
        signals: [
          {
            name: 'card_users_1h',
            value: 3,
            definition: 'distinct userId per cardFingerprint over 1h (at most 25)',
            kind: 'aggregate',
            key: ['cardFingerprint'],
            op: 'distinct',
            window: '1h',
          },
          { name: 'amount_log', value: 7.313, definition: 'ln(1 + amount)', kind: 'feature' },
        ],
        mattered: [{ name: 'card_users_1h', rules: ['card-shared-1h'], model: false }],
        omitted: 0,
      };
      assert.equal(await s.store.open([newCase('sig-1', T0, { signals }), newCase('sig-2', T0 + 1)], T0), 2);
      const page = await s.store.list({}, 'oldest', 500);
      const [withSignals, without] = ['sig-1', 'sig-2'].map((tx) => page.cases.find((c) => c.transactionId === tx));
      assert.ok(withSignals !== undefined && without !== undefined);
      assert.ok(!('signals' in withSignals), 'the list does not carry them');
      const got = await s.store.get(withSignals.id);
      assert.deepEqual(got?.signals, signals);
      assert.ok(!('signals' in (got?.case ?? {})));
      const old = await s.store.get(without.id);
      assert.ok(old !== undefined && old.signals === undefined, 'a case without signals has none');
    });
  });
}
