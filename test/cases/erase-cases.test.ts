/**
 * `learning:erase --user` also erases the user's review cases from the store `CASE_STORE` names (PGlite in a
 * temporary folder here), and nobody else's.
 */
import { loadConfig, type Config } from '../../lib/config/config';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { PgliteClient } from '../../lib/platform/sql/pglite-client';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { eraseCommand } from '../../lib/commands/erase-command';
import { newCase } from './support';
import { SHARED_WITH_CASES } from '../support/case-database';

/** The settings the offline commands read, as their scripts read them (from the environment this test sets). */
const env = (): Config => loadConfig(process.env);

describe('learning:erase erases cases', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-erase-cases-'));
  const saved = { ...process.env };
  after(() => {
    for (const k of ['CASE_STORE', 'PGLITE_DIR', 'DECISION_LOG_DIR']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("removes the user's cases with --user, and keeps the others", async () => {
    const pglite = path.join(dir, 'pglite');
    const T0 = Date.parse('2026-12-01T08:00:00Z');
    const store = await SqlCaseStore.create(await PgliteClient.create(pglite), undefined, SHARED_WITH_CASES);
    await store.open(
      [
        newCase('e-1', T0, {}, { userId: 'user-gone' }),
        newCase('e-2', T0, {}, { userId: 'user-gone' }),
        newCase('e-3', T0, {}, { userId: 'user-stays' }),
      ],
      T0,
    );
    await store.dispose(); // PGlite serves one process at a time, as the command expects
    process.env['CASE_STORE'] = 'pglite';
    process.env['PGLITE_DIR'] = pglite;
    process.env['DECISION_LOG_DIR'] = path.join(dir, 'decisions');
    const erased = await eraseCommand(['--user', 'user-gone'], env());
    assert.equal(erased.cases, 2);
    const after = await SqlCaseStore.create(await PgliteClient.create(pglite), undefined, SHARED_WITH_CASES);
    try {
      assert.deepEqual(
        (await after.list({}, 'oldest', 10)).cases.map((c) => c.transactionId),
        ['e-3'],
      );
    } finally {
      await after.dispose();
    }
  });
});
