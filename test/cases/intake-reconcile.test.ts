/**
 * `npm run cases:reconcile`'s comparison on real stores (PGlite, and the machine's PostgreSQL in a fresh schema) and a
 * decision log in a folder: the review decisions of the window without a case are counted and named by keyed hash;
 * other decisions and other windows are not counted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { reconcileCases } from '../../lib/cases/case-reconcile';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import { KeyedHash } from '../../lib/platform/keyed-hash';
import { hourPrefix } from '../../lib/learning/learning-store';
import { newCase, pgliteDb, serverDb, suiteStore } from './support';

const T0 = Date.parse('2026-12-01T08:00:00Z');
const HOUR = 3_600_000;

const record = (tx: string, decision: string, at: number): string =>
  JSON.stringify({ v: 1, transactionId: tx, decidedAt: new Date(at).toISOString(), decision, event: {}, hashed: [] });

for (const db of [pgliteDb(), serverDb()]) {
  describe(`cases:reconcile on ${db.name}`, () => {
    const s = suiteStore(db);
    const dir = mkdtempSync(path.join(tmpdir(), 'test-reconcile-'));
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('counts the review decisions of the window without a case, by keyed hash', async () => {
      const log = new FolderLearningStore(dir);
      await log.append(
        `${hourPrefix(T0)}test.jsonl`,
        [
          record('rc-1', 'review', T0),
          record('rc-2', 'review', T0 + 1000),
          record('rc-3', 'review', T0 + 2000),
          record('rc-4', 'approve', T0 + 3000),
        ].join('\n') + '\n',
      );
      await log.append(`${hourPrefix(T0 + 5 * HOUR)}test.jsonl`, record('rc-later', 'review', T0 + 5 * HOUR) + '\n');
      await s.store.open([newCase('rc-1', T0), newCase('rc-2', T0)], T0);
      const hash = new KeyedHash('test-key');
      const sql = (s.store as SqlCaseStore).sql;
      const r = await reconcileCases(log, sql, hash, T0, T0 + HOUR);
      assert.deepEqual(r, { reviews: 3, withCase: 2, missing: [hash.of('rc-3')] });
      await s.store.open([newCase('rc-3', T0)], T0);
      assert.deepEqual(await reconcileCases(log, sql, hash, T0, T0 + HOUR), { reviews: 3, withCase: 3, missing: [] });
    });
  });
}
