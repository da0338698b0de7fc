/**
 * Migration 005 on both databases (the PostgreSQL server in a fresh schema, PGlite in a temporary folder): the audit
 * trail takes entries of kind `signals` (the signals rollout's uploads and admin changes) and still refuses a kind
 * outside its list.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { migrate } from '../../lib/platform/sql/migrate';
import { CASE_DATABASE } from '../support/case-database';
import type { SqlClient } from '../../lib/platform/sql/sql-client';
import { parseAuditQuery } from '../../lib/governance/audit-query';
import { SqlAuditLog } from '../../lib/governance/sql-audit-log';
import { pgliteDb, serverDb, type TestDb } from '../cases/support';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

for (const db of [serverDb(), pgliteDb()] as TestDb[]) {
  describe(`audit kind signals on ${db.name}`, () => {
    let sql: SqlClient;
    let log: SqlAuditLog;
    before(async () => {
      sql = await db.client();
      await migrate(sql, CASE_DATABASE);
      log = new SqlAuditLog({ sql: () => sql, wallClock: () => T0 });
    });
    after(async () => {
      await sql.dispose();
      await db.cleanup();
    });

    it('records and filters signals entries; another kind is refused by the table', async () => {
      await log.record({
        actor: 'blob-upload',
        kind: 'signals',
        name: 'default',
        action: 'upload',
        oldValue: null,
        newValue: { outcome: 'published', version: '1.1.0', mode: 'active', generation: 1 },
      });
      const q = parseAuditQuery(new URLSearchParams({ kind: 'signals' }));
      const { events } = await log.list(q);
      assert.deepEqual(
        events.map((e) => [e.kind, e.name, e.action]),
        [['signals', 'default', 'upload']],
      );
      await assert.rejects(
        sql.query(
          `INSERT INTO audit_events (at, actor, kind, name, action) VALUES (now(), 'x', 'other', 'n', 'a')`,
          [],
        ),
      );
    });
  });
}
