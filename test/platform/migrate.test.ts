/**
 * The platform's migration runner over the lists the case database's owners keep (cases, governance, webhooks): the
 * union is the one sequence the case store used to keep alone (same versions, names and statements, same order), a
 * database the old code migrated, wholly or in part, is accepted and brought to the same schema as a fresh one, and
 * two lists claiming one version are refused.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CASE_MIGRATIONS } from '../../lib/cases/migrations';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { migrate, schemaOf, type MigrationSet } from '../../lib/platform/sql/migrate';
import { PgliteClient } from '../../lib/platform/sql/pglite-client';
import type { SqlClient } from '../../lib/platform/sql/sql-client';
import { newCase } from '../cases/support';
import { CASE_DATABASE, SHARED_WITH_CASES } from '../support/case-database';
import { MIGRATIONS as OLD_MIGRATIONS, migrate as oldMigrate } from './fixtures/old-migrations';

/** The tables, columns, constraints, indexes and functions of the public schema, sorted. */
async function schemaShape(db: SqlClient): Promise<string[]> {
  const rows = await db.query<{ line: string }>(
    `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
        coalesce(column_default, '') AS line
       FROM information_schema.columns WHERE table_schema = 'public'
     UNION ALL
     SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
       FROM pg_constraint WHERE connamespace = 'public'::regnamespace
     UNION ALL
     SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
     UNION ALL
     SELECT 'trigger ' || tgname || ' ' || tgrelid::regclass::text FROM pg_trigger WHERE NOT tgisinternal
     UNION ALL
     SELECT 'function ' || proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace`,
  );
  return rows.map((r) => r.line).sort();
}

/** The versions and names `schema_migrations` records, in version order. */
async function recorded(db: SqlClient): Promise<string[]> {
  const rows = await db.query<{ version: number; name: string }>(
    'SELECT version, name FROM schema_migrations ORDER BY version',
  );
  return rows.map((r) => `${r.version} ${r.name}`);
}

describe('migrations of the case database', () => {
  const open: SqlClient[] = [];
  const fresh = async (): Promise<SqlClient> => {
    const db = await PgliteClient.create(undefined);
    open.push(db);
    return db;
  };
  after(async () => {
    for (const db of open) await db.dispose();
  });

  it('the owners’ lists together are the old sequence: same versions, names, statements and order', () => {
    assert.deepEqual(schemaOf(CASE_DATABASE), OLD_MIGRATIONS);
    const owners = new Map(CASE_DATABASE.flatMap((s) => s.migrations.map((m) => [m.version, s.owner] as const)));
    assert.deepEqual(
      [...owners].sort(([a], [b]) => a - b),
      [
        [1, 'cases'],
        [2, 'governance'],
        [3, 'governance'],
        [4, 'cases'],
        [5, 'governance'],
        [6, 'webhooks'],
        [7, 'cases'],
        [8, 'cases'],
      ],
    );
  });

  it('accepts a database the old code migrated: nothing to apply, and the case store serves on it', async () => {
    const db = await fresh();
    assert.deepEqual(await oldMigrate(db), [1, 2, 3, 4, 5, 6, 7, 8], 'the old code migrates from empty');
    const before = await schemaShape(db);
    assert.deepEqual(await migrate(db, CASE_DATABASE), [], 'the new runner finds every migration applied');
    assert.deepEqual(await schemaShape(db), before);
    const store = await SqlCaseStore.create(db, undefined, SHARED_WITH_CASES);
    assert.equal(await store.open([newCase('old-db-1', Date.parse('2026-12-01T08:00:00Z'))], Date.now()), 1);
    assert.equal((await store.list({ merchantId: 'm-1' }, 'oldest', 10)).cases.length, 1);
  });

  it('finishes a database the old code migrated in part, to the schema of a fresh one', async () => {
    const old = await fresh();
    assert.deepEqual(await oldMigrate(old, OLD_MIGRATIONS.slice(0, 5)), [1, 2, 3, 4, 5]);
    assert.deepEqual(await migrate(old, CASE_DATABASE), [6, 7, 8]);
    const now = await fresh();
    assert.deepEqual(await migrate(now, CASE_DATABASE), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(await schemaShape(old), await schemaShape(now));
    assert.deepEqual(await recorded(old), await recorded(now));
    assert.equal((await recorded(now)).length, 8);
  });

  it('a database the case store alone migrated (an offline command) gets the others’ later, as a fresh one', async () => {
    const alone = await fresh();
    assert.deepEqual(await migrate(alone, [CASE_MIGRATIONS]), [1, 4, 7, 8]);
    assert.deepEqual(await migrate(alone, CASE_DATABASE), [2, 3, 5, 6]);
    const now = await fresh();
    await migrate(now, CASE_DATABASE);
    assert.deepEqual(await schemaShape(alone), await schemaShape(now));
  });

  it('applies the lists in version order whatever order they are given in', async () => {
    const db = await fresh();
    assert.deepEqual(await migrate(db, [...CASE_DATABASE].reverse()), [1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('refuses two lists claiming one version, naming both owners', () => {
    const a: MigrationSet = { owner: 'cases', migrations: [{ version: 9, name: '009_a', statements: [] }] };
    const b: MigrationSet = { owner: 'webhooks', migrations: [{ version: 9, name: '009_b', statements: [] }] };
    assert.throws(() => schemaOf([a, b]), /version 9 is claimed twice: 009_a \(cases\) and 009_b \(webhooks\)/);
    assert.throws(
      () => schemaOf([{ owner: 'x', migrations: [{ version: 0, name: 'zero', statements: [] }] }]),
      /not a positive integer/,
    );
    assert.deepEqual(schemaOf([a, a]), a.migrations, 'one list given twice counts once');
  });
});
