/**
 * The audit trail's table on both databases (the PostgreSQL server in a fresh schema, PGlite in a temporary folder):
 * entries are appended with the injected time, the table refuses UPDATE, DELETE and TRUNCATE, pages come newest
 * first with filters and a keyset cursor, values are bounded, and an unreachable database is `dependency_unavailable`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { migrate } from '../../lib/platform/sql/migrate';
import { CASE_DATABASE } from '../support/case-database';
import type { SqlClient } from '../../lib/platform/sql/sql-client';
import { AppError } from '../../lib/errors/errors';
import type { AuditEvent, AuditQuery } from '../../lib/governance/audit-log';
import { AUDIT_MAX_ARRAY_ITEMS, boundedValue, SqlAuditLog } from '../../lib/governance/sql-audit-log';
import { pgliteDb, serverDb, type TestDb } from '../cases/support';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

for (const db of [serverDb(), pgliteDb()] as TestDb[]) {
  describe(`audit trail table on ${db.name}`, () => {
    let sql: SqlClient;
    let now = T0;
    let log: SqlAuditLog;
    before(async () => {
      sql = await db.client();
      await migrate(sql, CASE_DATABASE);
      log = new SqlAuditLog({ sql: () => sql, wallClock: () => now });
    });
    after(async () => {
      await sql.dispose();
      await db.cleanup();
    });

    it('appends an entry stamped with the injected time, its actor and old and new values', async () => {
      now = T0;
      await log.record({
        actor: 'alice',
        kind: 'ruleset',
        name: 'fraud-rules',
        action: 'promote',
        oldValue: { active: '1.0.0' },
        newValue: { active: '1.1.0' },
      });
      const { events } = await log.list({ limit: 10 });
      assert.equal(events.length, 1);
      const e = events[0] as AuditEvent;
      assert.match(e.id, /^[1-9][0-9]*$/);
      assert.deepEqual(
        { ...e, id: undefined },
        {
          id: undefined,
          at: '2026-12-01T10:00:00.000Z',
          actor: 'alice',
          kind: 'ruleset',
          name: 'fraud-rules',
          action: 'promote',
          oldValue: { active: '1.0.0' },
          newValue: { active: '1.1.0' },
        },
      );
    });

    it('refuses UPDATE, DELETE and TRUNCATE (append-only)', async () => {
      await assert.rejects(sql.query(`UPDATE audit_events SET actor = 'mallory'`), /append-only: UPDATE refused/);
      await assert.rejects(sql.query(`DELETE FROM audit_events`), /append-only: DELETE refused/);
      await assert.rejects(sql.query(`TRUNCATE audit_events`), /append-only: TRUNCATE refused/);
      const rows = await sql.query<{ actor: string }>('SELECT actor FROM audit_events');
      assert.deepEqual(
        rows.map((r) => r.actor),
        ['alice'],
      );
    });

    it('pages newest first with filters and the cursor, each entry once', async () => {
      // 12 more entries: two per millisecond (ties on the time are ordered by id), two actors, three kinds
      const kinds = ['model', 'list', 'case'] as const;
      for (let i = 0; i < 12; i++) {
        now = T0 + 1000 + Math.floor(i / 2);
        await log.record({
          actor: i % 2 === 0 ? 'bob' : 'carol',
          kind: kinds[i % 3] ?? 'model',
          name: `n${i % 3}`,
          action: 'x',
          oldValue: null,
          newValue: { i },
        });
      }
      const all = async (q: Omit<AuditQuery, 'limit' | 'cursor'>, limit: number): Promise<AuditEvent[]> => {
        const out: AuditEvent[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 20; page++) {
          const r = await log.list({ ...q, limit, ...(cursor === undefined ? {} : { cursor }) });
          assert.ok(r.events.length <= limit);
          out.push(...r.events);
          if (r.cursor === undefined) return out;
          cursor = r.cursor;
        }
        assert.fail('more than 20 pages');
      };
      const everything = await all({}, 5);
      assert.equal(everything.length, 13);
      assert.equal(new Set(everything.map((e) => e.id)).size, 13);
      const is = everything.map((e) => (e.newValue as { i?: number }).i ?? -1);
      assert.deepEqual(is, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1]);
      assert.deepEqual(
        (await all({ actor: 'carol' }, 2)).map((e) => (e.newValue as { i: number }).i),
        [11, 9, 7, 5, 3, 1],
      );
      assert.deepEqual(
        (await all({ kind: 'list', name: 'n1' }, 1)).map((e) => (e.newValue as { i: number }).i),
        [10, 7, 4, 1],
      );
      // from inclusive, to exclusive
      assert.deepEqual(
        (await all({ from: T0 + 1001, to: T0 + 1003 }, 3)).map((e) => (e.newValue as { i: number }).i),
        [5, 4, 3, 2],
      );
      assert.deepEqual(await all({ kind: 'ruleset', actor: 'bob' }, 5), []);
    });

    it('bounds the values it stores (arrays at most 1,000 items)', async () => {
      now = T0 + 5000;
      const values = Array.from({ length: 1500 }, (_, i) => `v${i}`);
      await log.record({
        actor: 'dave',
        kind: 'list',
        name: 'big',
        action: 'add',
        oldValue: undefined,
        newValue: { values },
      });
      const [e] = (await log.list({ name: 'big', limit: 1 })).events;
      assert.equal(e?.oldValue, null);
      assert.equal((e?.newValue as { values: string[] }).values.length, AUDIT_MAX_ARRAY_ITEMS);
    });
  });
}

describe('audit trail values and failures', () => {
  it('cuts long strings and replaces a value too large as a whole', () => {
    assert.equal((boundedValue('x'.repeat(5000)) as string).length, 1001);
    const huge = Array.from({ length: 900 }, () => 'y'.repeat(900));
    assert.deepEqual(boundedValue(huge), { truncated: true, chars: JSON.stringify(huge).length });
    assert.equal(boundedValue(undefined), null);
  });

  it('is dependency_unavailable when the database cannot be reached', async () => {
    const down = new SqlAuditLog({
      sql: () => {
        throw new Error('connect ECONNREFUSED');
      },
      wallClock: () => T0,
    });
    const unavailable = (e: unknown): boolean => e instanceof AppError && e.code === 'dependency_unavailable';
    await assert.rejects(
      down.record({ actor: 'a', kind: 'model', name: 'm', action: 'promote', oldValue: null, newValue: null }),
      unavailable,
    );
    await assert.rejects(down.list({ limit: 5 }), unavailable);
  });
});
