/**
 * The guarded case store: a database that cannot be reached at start-up is tried again in the background
 * (real `pg` against a closed port, then PGlite), calls meanwhile are `dependency_unavailable` (503), and a failure
 * of the database later is `dependency_unavailable` too, never an unexpected error.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CaseStore } from '../../lib/cases/case-store';
import { GuardedCaseStore } from '../../lib/cases/guarded-case-store';
import { PgClient } from '../../lib/platform/sql/pg-client';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { AppError } from '../../lib/errors/errors';
import { FakeClock, FakeTimers } from '../context/support';
import { eventually } from '../support/eventually';
import { newCase, pgliteDb, TEST_PG } from './support';
import { SHARED_WITH_CASES } from '../support/case-database';

const T0 = Date.parse('2026-12-01T08:00:00Z');

function isUnavailable(e: unknown): boolean {
  return e instanceof AppError && e.code === 'dependency_unavailable' && e.status === 503;
}

describe('guarded case store', () => {
  it('retries opening in the background with backoff; answers 503 until open, then serves', async () => {
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const db = pgliteDb();
    const failures: { error: string; retryInMs: number }[] = [];
    let opened = 0;
    let attempts = 0;
    const store = new GuardedCaseStore({
      open: async () => {
        attempts++;
        if (attempts <= 2) {
          // nothing listens on port 1: the real driver's connection error
          return SqlCaseStore.create(
            await PgClient.create({ ...TEST_PG, port: 1, poolMax: 1 }),
            undefined,
            SHARED_WITH_CASES,
          );
        }
        return SqlCaseStore.create(await db.client(), undefined, SHARED_WITH_CASES);
      },
      timers,
      onOpenFailed: (e) => failures.push(e),
      onOpened: () => opened++,
    });
    try {
      await store.firstAttempt();
      assert.equal(failures.length, 1);
      await assert.rejects(store.open([newCase('g-1', T0)], T0), isUnavailable);
      assert.deepEqual(timers.delays, [1000]);
      clock.advance(1000);
      timers.runDue();
      await eventually(
        async () => failures.length,
        (n) => n === 2,
        'the second attempt failing',
      );
      assert.deepEqual(timers.delays, [2000], 'the wait doubles');
      clock.advance(2000);
      timers.runDue();
      await eventually(
        async () => opened,
        (n) => n === 1,
        'the third attempt opening the store',
      );
      assert.equal(await store.open([newCase('g-1', T0)], T0), 1);
      assert.equal((await store.list({}, 'oldest', 10)).cases.length, 1);
    } finally {
      await store.dispose();
      await db.cleanup();
    }
  });

  it('maps a failure of the open database to dependency_unavailable', async () => {
    const failing = {
      list: () => Promise.reject(new Error('Connection terminated unexpectedly')),
      dispose: () => Promise.resolve(),
    } as unknown as CaseStore;
    const store = new GuardedCaseStore({
      open: () => Promise.resolve(failing),
      timers: new FakeTimers(new FakeClock()),
    });
    await store.firstAttempt();
    await assert.rejects(store.list({}, 'oldest', 10), isUnavailable);
    await store.dispose();
  });
});
