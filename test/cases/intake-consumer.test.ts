/**
 * The case intake (the `caseIntake` function's engine call) on real stores (PGlite, and the machine's PostgreSQL in
 * a fresh schema): a batch opens one case per transaction, a redelivery opens none; a row the database refuses for
 * its data (a NUL character: SQLSTATE class 22) is rejected with its reason while the others are written; a body
 * that is not a case is rejected naming its fields; an unreachable database makes the batch wait (backoff by
 * delivery count, bounded) and throw, so the queue redelivers it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CaseIntake, isConnectionError, isDataError, type IntakeMessage } from '../../lib/cases/case-intake';
import type { CaseStore } from '../../lib/cases/case-store';
import { AppError } from '../../lib/errors/errors';
import { FakeClock, FakeTimers } from '../support/clock';
import { eventually } from '../support/eventually';
import { newCase, pgliteDb, serverDb, suiteStore } from './support';

const T0 = Date.parse('2026-12-01T08:00:00Z');

const msg = (body: unknown, deliveryCount = 1): IntakeMessage => ({ body, deliveryCount, messageId: 'm' });

for (const db of [pgliteDb(), serverDb()]) {
  describe(`case intake on ${db.name}`, () => {
    const s = suiteStore(db);
    const intake = (store: CaseStore = s.store, timers = new FakeTimers(new FakeClock())): CaseIntake =>
      new CaseIntake({ store, timers, wallClock: () => T0, retryBaseMs: 1000, retryMaxMs: 20_000 });

    it('opens one case per transaction; a redelivered batch opens none', async () => {
      const batch = ['i-1', 'i-2', 'i-1'].map((tx) => msg(newCase(tx, T0)));
      assert.deepEqual(await intake().write(batch), { opened: 2, rejected: [] });
      assert.deepEqual(await intake().write(batch.map((m) => ({ ...m, deliveryCount: 2 }))), {
        opened: 0,
        rejected: [],
      });
      const json = msg(JSON.stringify(newCase('i-3', T0))); // a body delivered as text
      assert.deepEqual(await intake().write([json]), { opened: 1, rejected: [] });
    });

    it('a row refused for its data is rejected with its SQLSTATE; the others are written', async () => {
      const bad = newCase('i-bad', T0, {}, { userId: 'user\u0000nul' });
      const r = await intake().write([msg(newCase('i-4', T0)), msg(bad), msg({ transactionId: 7 }), msg('{not json')]);
      assert.equal(r.opened, 1);
      assert.deepEqual(
        r.rejected.map((x) => [x.reason, x.detail.slice(0, x.reason === 'case_unwritable' ? 11 : 12)]),
        [
          ['invalid_case', 'invalid fiel'],
          ['invalid_case', 'not JSON'],
          ['case_unwritable', 'SQLSTATE 22'],
        ],
      );
      assert.match(r.rejected[0]?.detail ?? '', /transactionId.*payment/);
      assert.equal(JSON.parse(r.rejected[2]?.originalBody ?? '{}').transactionId, 'i-bad', 'the original body');
      const open = (await s.store.list({}, 'oldest', 100)).cases.map((c) => c.transactionId);
      assert.ok(open.includes('i-4') && !open.includes('i-bad'));
    });

    it("a case's signals are written with it; a message whose signals are malformed is rejected naming them", async () => {
      const signals = {
        version: { name: 'default', version: '1.1.0' },
        signals: [{ name: 'card_users_1h', value: 3, definition: 'd', kind: 'aggregate', key: ['cardFingerprint'] }],
        mattered: [{ name: 'card_users_1h', rules: ['card-shared-1h'], model: false }],
        omitted: 0,
      };
      const bad = { ...newCase('i-sig-bad', T0), signals: { ...signals, signals: [{ name: 'x', value: 'three' }] } };
      const r = await intake().write([msg({ ...newCase('i-sig', T0), signals }), msg(bad)]);
      assert.equal(r.opened, 1);
      assert.deepEqual(
        r.rejected.map((x) => x.reason),
        ['invalid_case'],
      );
      assert.match(r.rejected[0]?.detail ?? '', /signals\.signals\.0\.value/);
      const id = (await s.store.list({}, 'oldest', 100)).cases.find((c) => c.transactionId === 'i-sig')?.id ?? '';
      assert.deepEqual((await s.store.get(id))?.signals, signals);
    });

    it('an unreachable database: waits by delivery count (bounded), then throws for a redelivery', async () => {
      const clock = new FakeClock();
      const timers = new FakeTimers(clock);
      const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
      const down: CaseStore = { ...s.store, open: () => Promise.reject(refused) };
      for (const [deliveryCount, waitMs] of [
        [1, 1000],
        [3, 4000],
        [30, 20_000],
      ] as const) {
        const done = intake(down, timers)
          .write([msg(newCase('i-down', T0), deliveryCount)])
          .then(
            () => 'resolved',
            (e: unknown) => (e instanceof AppError ? e.code : 'other'),
          );
        await eventually(
          async () => timers.delays,
          (d) => d.length === 1,
          `the backoff wait of delivery ${deliveryCount}`,
        );
        assert.deepEqual(timers.delays, [waitMs]);
        clock.advance(waitMs);
        timers.runDue();
        assert.equal(await done, 'dependency_unavailable');
      }
    });
  });
}

describe('case intake: which failures are whose', () => {
  it('classifies by SQLSTATE class and errno, through AppError causes', () => {
    const pg = (code: string): Error => Object.assign(new Error('x'), { code });
    const wrapped = (e: unknown): AppError =>
      new AppError('dependency_unavailable', 'x', { cause: e, transient: true });
    assert.ok(isDataError(wrapped(pg('22021'))) && !isConnectionError(wrapped(pg('22021'))));
    assert.ok(isDataError(pg('23502')));
    assert.ok(isConnectionError(wrapped(pg('57P01'))) && !isDataError(pg('57P01')), 'admin shutdown');
    assert.ok(isConnectionError(pg('08006')));
    assert.ok(isConnectionError(pg('ECONNRESET')));
    assert.ok(isConnectionError(new AppError('dependency_unavailable', 'not open yet', { transient: true })));
    assert.ok(isConnectionError(new Error('Connection terminated unexpectedly')));
    assert.ok(!isConnectionError(pg('42P01')) && !isDataError(pg('42P01')), 'a schema error: neither');
    assert.ok(isDataError(new TypeError('cannot read')));
  });
});
