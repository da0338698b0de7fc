/**
 * Disposing the drafts subsystem stops a draft's backtest that is running on the instance: it stops at its next
 * chunk, is recorded `failed` (interrupted), and the disposal waits for that record. The backtest is held inside
 * (its list read waits) until the disposal has begun; left alone, the same backtest ends `done`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Cases } from '../../lib/cases/create-cases';
import { migrate } from '../../lib/platform/sql/migrate';
import { CASE_DATABASE } from '../support/case-database';
import type { SqlClient } from '../../lib/platform/sql/sql-client';
import type { DecisioningParts } from '../../lib/decisioning/create-decisioning';
import { EMPTY_VELOCITY } from '../../lib/domain/user-context';
import { createDrafts, type DraftsRuntime } from '../../lib/governance/create-drafts';
import { encodePrincipal } from '../../lib/identity/principal';
import type { SessionManager } from '../../lib/inference/session-manager';
import { DecisionLog } from '../../lib/learning/decision-log';
import type { DecisionRecord } from '../../lib/learning/decision-record';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import type { Learning } from '../../lib/learning/learning';
import { unrefTimers } from '../../lib/platform/timers';
import { pgliteDb } from '../cases/support';
import { testConfig } from '../support/config';
import { eventually, within } from '../support/eventually';

const NOW = Date.parse('2026-12-01T12:00:00.000Z');
const LEAD = (() => {
  const v = encodePrincipal('lead-a', ['lead']);
  return { get: (n: string) => (n === 'x-ms-client-principal' ? v : null) };
})();
const WINDOW = { from: new Date(NOW - 86_400_000).toISOString(), to: new Date(NOW).toISOString() };

/** A draft whose backtest reads a list (so the test can hold it there). */
const draftDoc = (version: string) => ({
  name: 'fraud-rules',
  version,
  lists: [{ name: 'blocked_devices', key: 'deviceId' }],
  rules: [{ id: 'blocked-device', when: 'in_list("blocked_devices", event.deviceId)', action: 'block' }],
});

function logged(tx: string): DecisionRecord {
  return {
    v: 1,
    transactionId: tx,
    decidedAt: new Date(NOW - 3_600_000).toISOString(),
    model: { name: 'fraud', version: '1.0.0' },
    features: {},
    velocity: { ...EMPTY_VELOCITY },
    score: 0.01,
    decision: 'approve',
    rules: [],
    source: 'local',
    event: { transactionId: tx, merchantId: 'm-ok', deviceId: 'd-1', amount: 20 },
    hashed: [],
  } as unknown as DecisionRecord;
}

describe("disposing the drafts stops a draft's running backtest", () => {
  const db = pgliteDb();
  const dir = mkdtempSync(path.join(tmpdir(), 'test-drafts-dispose-'));
  let sql: SqlClient;
  let store: FolderLearningStore;
  /** Resolves the list read every backtest waits on. */
  let release: () => void = () => undefined;

  /** The drafts over the test's database and decision log, their backtests held at the list read. */
  function drafts(): DraftsRuntime {
    const held = new Promise<void>((r) => (release = r));
    const runtime = createDrafts(
      testConfig({ CASE_STORE: 'pglite', PGLITE_DIR: path.join(dir, 'unused'), IDENTITY_MODE: 'easyauth' }),
      {
        cases: { sql: () => sql } as unknown as Cases,
        decisioning: {
          decisioning: { listPage: async () => (await held, { entries: [] }) },
          repository: { versions: async () => ['1.0.0'], read: () => Promise.reject(new Error('none')) },
        } as unknown as DecisioningParts,
        learning: { store, keyedHash: undefined } as unknown as Learning,
        sessions: { manifest: undefined } as unknown as SessionManager,
        record: async () => undefined,
        wallClock: () => NOW,
      },
    );
    assert.ok(runtime !== undefined);
    return runtime;
  }

  before(async () => {
    sql = await db.client();
    await migrate(sql, CASE_DATABASE);
    store = new FolderLearningStore(path.join(dir, 'log'));
    const log = new DecisionLog({ store, writer: 'w1', queueMax: 10, batchMax: 10, flushMs: 1, timers: unrefTimers });
    log.append(logged('t-1'), NOW - 3_600_000);
    await log.dispose();
  });
  after(async () => {
    await sql.dispose();
    await db.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('left alone, the held backtest ends done once its list read answers', async () => {
    const runtime = drafts();
    await runtime.drafts.create(LEAD, 'fraud-rules', draftDoc('1.1.0'));
    const started = await runtime.drafts.backtest(LEAD, 'fraud-rules', '1.1.0', WINDOW);
    assert.equal(started.status, 202, 'held at its list read');
    release();
    const b = (await eventually(
      () => runtime.drafts.backtestOf(LEAD, 'fraud-rules', '1.1.0'),
      (x) => (x as { state: string }).state !== 'running',
      'the backtest to end',
      10_000,
    )) as { state: string };
    assert.equal(b.state, 'done', JSON.stringify(b));
    await within(runtime.dispose(), 'the disposal');
  });

  it('disposed while running, it stops at its next chunk, recorded failed (interrupted) before the disposal ends', async () => {
    const runtime = drafts();
    await runtime.drafts.create(LEAD, 'fraud-rules', draftDoc('1.2.0'));
    const started = await runtime.drafts.backtest(LEAD, 'fraud-rules', '1.2.0', WINDOW);
    assert.equal(started.status, 202, 'held at its list read');
    const disposal = runtime.dispose();
    release();
    await within(disposal, 'the disposal');
    const b = (await runtime.drafts.backtestOf(LEAD, 'fraud-rules', '1.2.0')) as { state: string; error?: string };
    assert.equal(b.state, 'failed', JSON.stringify(b));
    assert.match(b.error ?? '', /interrupted/);
    await within(runtime.dispose(), 'a second disposal'); // harmless
  });
});
