/**
 * A verdict is atomic and idempotent, on the real PostgreSQL server (a fresh schema) and on PGlite: the case's close,
 * its label and list entry (the case outbox) and its audit row commit in one transaction, so a verdict that fails
 * inside it (the audit insert failing after writing, the database refusing the update) leaves no label, no audit
 * row and the case open; the same verdict again answers the case and writes nothing new; another verdict is 409.
 * The relay delivers the outbox after the commit, at least once: a labels store that is down and then recovers gets
 * exactly one label, a redelivery stores no second one, a claimed row is leased, and `dispose` waits for a pass.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CaseOutbox, type OutboxMessage } from '../../lib/cases/case-outbox';
import { CaseService, type CaseLists, type Lookup } from '../../lib/cases/case-service';
import type { Case } from '../../lib/cases/case-store';
import { OutboxRelay, type OutboxRelayEvents } from '../../lib/cases/outbox-relay';
import type { SqlClient } from '../../lib/platform/sql/sql-client';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { deliverVerdictMessage } from '../../lib/cases/verdict-relay';
import { AppError } from '../../lib/errors/errors';
import { Audit } from '../../lib/governance/audit';
import type { AuditLog } from '../../lib/governance/audit-log';
import { SqlAuditLog } from '../../lib/governance/sql-audit-log';
import { Identity } from '../../lib/identity/identity';
import { encodePrincipal } from '../../lib/identity/principal';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import { LabelStore, parseLabels } from '../../lib/learning/labels';
import type { Logger } from '../../lib/platform/logger';
import { unrefTimers, type Timers } from '../../lib/platform/timers';
import { within } from '../support/eventually';
import { newCase, pgliteDb, serverDb, type TestDb } from './support';
import { SHARED_WITH_CASES } from '../support/case-database';

const T0 = Date.parse('2026-12-01T09:00:00Z');

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const as = (name: string, roles: string[] = ['analyst', 'lead']): Lookup => {
  const h: Record<string, string> = { 'x-ms-client-principal': encodePrincipal(name, roles) };
  return { get: (k: string) => h[k.toLowerCase()] ?? null };
};

/** A labels store on a folder that can be taken down: while `down`, every write fails. */
function labelsSink(dir: string): {
  down: boolean;
  writes: number;
  addLabels(body: unknown): Promise<unknown>;
  stored(): Promise<{ transactionId: string; label: string; source?: string }[]>;
} {
  const folder = new FolderLearningStore(dir);
  const sink = {
    down: false,
    writes: 0,
    addLabels: async (body: unknown): Promise<unknown> => {
      sink.writes++;
      if (sink.down) throw new AppError('dependency_unavailable', 'The label store is unavailable; retry the call.');
      return labels.add(parseLabels(body));
    },
    stored: () => labels.all(),
  };
  const labels = new LabelStore(folder);
  return sink;
}

/** The lists path in memory: `blocked_users` keyed by `userId`. */
function memoryLists(): CaseLists & { added: { list: string; body: unknown }[] } {
  const added: { list: string; body: unknown }[] = [];
  return {
    added,
    listKey: (name) => {
      if (name !== 'blocked_users') throw new AppError('not_found', `No list ${name}.`);
      return 'userId';
    },
    addToList: (list, body) => {
      added.push({ list, body });
      return Promise.resolve({ added: 1 });
    },
  };
}

for (const make of [serverDb, pgliteDb]) {
  const db: TestDb = make();
  describe(`verdicts through the case outbox: ${db.name}`, () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'test-verdict-outbox-'));
    let sql: SqlClient;
    let store: SqlCaseStore;
    let now = T0;
    const clock = (): number => now;
    before(async () => {
      sql = await db.client();
      store = await SqlCaseStore.create(sql, undefined, SHARED_WITH_CASES);
    });
    after(async () => {
      await store.dispose();
      await db.cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    const opened = async (tx: string, userId = `user-${tx}`): Promise<Case> => {
      await store.open([newCase(tx, now, {}, { userId })], now);
      const c = (await store.list({ status: 'open' }, 'oldest', 1000)).cases.find((x) => x.transactionId === tx);
      assert.ok(c !== undefined, `the case of ${tx}`);
      return c;
    };
    const countOf = async (table: 'case_outbox' | 'audit_events', caseId: string): Promise<number> => {
      const where = table === 'case_outbox' ? 'case_id = $1::bigint' : `kind = 'case' AND name = $1`;
      return Number((await sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, [caseId]))[0]?.['n']);
    };
    const relayOf = (
      sink: { addLabels(b: unknown): Promise<unknown> },
      lists?: CaseLists,
      timers: Timers = unrefTimers,
    ) =>
      new OutboxRelay({
        sql: () => sql,
        deliver: async (m) => void (await deliverVerdictMessage(m, (b) => sink.addLabels(b), lists)),
        timers,
        wallClock: clock,
        pollMs: 600_000, // in these tests a pass runs when asked, or woken by a commit
      });

    it('a verdict whose audit insert fails after writing leaves no label, no audit row, the case open; the retry is one of each', async () => {
      const sink = labelsSink(path.join(dir, 'fail'));
      const service = new CaseService({
        store,
        identity: new Identity({ mode: 'development', devActor: { name: 'dev', roles: ['analyst'] } }),
        wallClock: clock,
      });
      const real = new SqlAuditLog({ sql: () => sql, wallClock: clock });
      let failAudit = true;
      const log: AuditLog = {
        record: (e) => real.record(e),
        list: (q) => real.list(q),
        recordIn: async (tx, e) => {
          await real.recordIn(tx, e); // the row is written in the transaction...
          if (failAudit) throw new Error('audit insert failed'); // ...then the transaction fails after the update
        },
      };
      const audit = new Audit({
        log,
        identity: new Identity({ mode: 'development', devActor: { name: 'dev', roles: ['lead'] } }),
        logger: quiet,
      });
      const relay = relayOf(sink);
      const c = await opened('tx-atomic-1');

      await assert.rejects(
        audit.verdict(service, as('alice'), c.id, { verdict: 'fraud', reason: 'confirmed' }),
        (e: unknown) => e instanceof AppError && e.code === 'dependency_unavailable',
      );
      assert.equal((await store.get(c.id))?.case.state, 'open', 'the case stays open');
      assert.equal(await countOf('audit_events', c.id), 0, 'no audit row');
      assert.equal(await countOf('case_outbox', c.id), 0, 'no label in the outbox');
      // the database refusing the update (a NUL byte in the reason) leaves nothing either
      failAudit = false;
      await assert.rejects(audit.verdict(service, as('alice'), c.id, { verdict: 'fraud', reason: 'bad\u0000byte' }));
      assert.equal((await store.get(c.id))?.case.state, 'open');
      assert.equal(await countOf('audit_events', c.id), 0);
      await relay.pass();
      assert.deepEqual(await sink.stored(), [], 'no label reached the labels store');

      const ok = await audit.verdict(service, as('alice'), c.id, { verdict: 'fraud', reason: 'confirmed' });
      assert.equal(ok.case.state, 'closed');
      assert.deepEqual(ok.label, {
        transactionId: 'tx-atomic-1',
        label: 'fraud',
        reportedAt: new Date(now).toISOString(),
        source: 'case',
      });
      now += 60_000;
      const again = await audit.verdict(service, as('bob'), c.id, { verdict: 'fraud', reason: 'confirmed' });
      assert.deepEqual(again, ok, 'the same verdict again answers the closed case and its label');
      await assert.rejects(
        audit.verdict(service, as('bob'), c.id, { verdict: 'legit', reason: 'confirmed' }),
        (e: unknown) => e instanceof AppError && e.code === 'conflict' && e.status === 409,
      );
      assert.equal(await countOf('audit_events', c.id), 1, 'one audit row');
      assert.equal(await countOf('case_outbox', c.id), 1, 'one label in the outbox');
      assert.deepEqual(await relay.pass(), { delivered: 1, failed: 0, full: false, nextInMs: 600_000 });
      const labels = await sink.stored();
      assert.deepEqual(
        labels.map((l) => [l.transactionId, l.label, l.source]),
        [['tx-atomic-1', 'fraud', 'case']],
        'exactly one label',
      );
      await relay.dispose();
    });

    it('delivers after the labels store was down, with exactly one label; a redelivery stores none', async () => {
      const sink = labelsSink(path.join(dir, 'down'));
      const service = new CaseService({
        store,
        identity: new Identity({ mode: 'development', devActor: { name: 'dev', roles: ['analyst'] } }),
        wallClock: clock,
      });
      const failed: Parameters<OutboxRelayEvents['failed']>[0][] = [];
      const relay = new OutboxRelay({
        sql: () => sql,
        deliver: async (m) => void (await deliverVerdictMessage(m, (b) => sink.addLabels(b), undefined)),
        timers: unrefTimers,
        wallClock: clock,
        on: { failed: (e) => failed.push(e) },
      });
      const c = await opened('tx-down-1');
      sink.down = true;
      await service.verdict(as('alice'), c.id, { verdict: 'legit' });
      assert.equal((await store.get(c.id))?.case.state, 'closed', 'the verdict never waits for the labels store');

      const first = await relay.pass();
      assert.deepEqual([first.delivered, first.failed, first.nextInMs], [0, 1, 1_000]);
      assert.deepEqual(failed, [{ kind: 'label', attempts: 1, retryInMs: 1_000, error: 'dependency_unavailable' }]);
      assert.equal((await relay.pass()).failed, 0, 'not due again before its backoff');
      now += 1_000;
      assert.deepEqual([(await relay.pass()).failed], [1]);
      assert.equal(failed[1]?.retryInMs, 2_000, 'the backoff doubles per attempt');
      const lastError = await sql.query(`SELECT last_error, attempts FROM case_outbox WHERE case_id = $1::bigint`, [
        c.id,
      ]);
      assert.deepEqual(lastError, [{ last_error: 'dependency_unavailable', attempts: 2 }]);

      sink.down = false;
      now += 2_000;
      assert.equal((await relay.pass()).delivered, 1, 'delivered once the labels store is back');
      assert.deepEqual(
        (await sink.stored()).filter((l) => l.transactionId === 'tx-down-1').map((l) => l.label),
        ['legit'],
      );
      // the mark of a delivery lost (the instance died after writing the label): when the claim's lease ends, the
      // row is delivered again
      await sql.query(`UPDATE case_outbox SET delivered_at = NULL WHERE case_id = $1::bigint`, [c.id]);
      assert.equal((await relay.pass()).delivered, 0, 'leased');
      now += 60_000;
      const writes = sink.writes;
      assert.equal((await relay.pass()).delivered, 1);
      assert.equal(sink.writes, writes + 1, 'redelivered');
      assert.equal(
        (await sink.stored()).filter((l) => l.transactionId === 'tx-down-1').length,
        1,
        'still exactly one label: the labels store keeps one per transaction and label',
      );
      assert.equal(await new CaseOutbox(sql).pending(), 0);
      await relay.dispose();
    });

    it("a lead's list addition goes through the outbox; a claimed row is leased; delivered rows are purged after a day", async () => {
      const sink = labelsSink(path.join(dir, 'lists'));
      const lists = memoryLists();
      const service = new CaseService({
        store,
        lists,
        identity: new Identity({ mode: 'development', devActor: { name: 'dev', roles: ['lead'] } }),
        wallClock: clock,
      });
      const c = await opened('tx-list-1', 'user-to-block');
      await assert.rejects(
        service.verdict(as('lena'), c.id, { verdict: 'fraud', addToList: { list: 'no_such_list' } }),
        (e: unknown) => e instanceof AppError && e.code === 'not_found',
      );
      assert.equal(await countOf('case_outbox', c.id), 0, 'a refused list leaves no label either');
      await service.verdict(as('lena'), c.id, {
        verdict: 'fraud',
        addToList: { list: 'blocked_users', ttlSeconds: 60 },
      });
      assert.equal(lists.added.length, 0, 'nothing reaches the lists before the relay');

      const outbox = new CaseOutbox(sql);
      const claimed = await outbox.claim(now, 10, 60_000);
      assert.deepEqual(
        claimed.map((r) => [r.kind, r.attempts]),
        [
          ['label', 1],
          ['list', 1],
        ],
      );
      assert.deepEqual(await outbox.claim(now, 10, 60_000), [], 'leased: another instance gets nothing');
      now += 60_000;
      const relay = relayOf(sink, lists);
      assert.equal((await relay.pass()).delivered, 2, 'the lease ended: claimed again and delivered');
      assert.deepEqual(lists.added, [{ list: 'blocked_users', body: { values: ['user-to-block'], ttlSeconds: 60 } }]);
      const message: OutboxMessage | undefined = claimed[1];
      assert.equal(message?.kind, 'list');

      now += 86_400_000 + 1;
      await relay.pass();
      assert.equal(await countOf('case_outbox', c.id), 0, 'delivered rows are purged after a day');
      await relay.dispose();
    });

    it('a commit wakes the started relay; dispose waits for the pass in flight and leaves no timer', async () => {
      const sink = labelsSink(path.join(dir, 'wake'));
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => (release = r));
      let started: () => void = () => undefined;
      const deliveryStarted = new Promise<void>((r) => (started = r));
      const pending = new Set<unknown>();
      const timers: Timers = {
        setTimeout: (fn, ms) => {
          const h = unrefTimers.setTimeout(() => {
            pending.delete(h);
            fn();
          }, ms);
          pending.add(h);
          return h;
        },
        clearTimeout: (h) => {
          pending.delete(h);
          unrefTimers.clearTimeout(h);
        },
      };
      const relay = new OutboxRelay({
        sql: () => sql,
        deliver: async (m) => {
          started();
          await gate;
          await deliverVerdictMessage(m, (b) => sink.addLabels(b), undefined);
        },
        timers,
        wallClock: clock,
        pollMs: 600_000,
      });
      const service = new CaseService({
        store,
        identity: new Identity({ mode: 'development', devActor: { name: 'dev', roles: ['analyst'] } }),
        wallClock: clock,
        committed: () => relay.wake(),
      });
      relay.start();
      const c = await opened('tx-wake-1');
      await service.verdict(as('alice'), c.id, { verdict: 'fraud' });
      await within(deliveryStarted, 'the relay woken by the commit to deliver the label');
      const disposed = relay.dispose();
      release();
      await within(disposed, 'dispose after the pass in flight');
      assert.equal(await new CaseOutbox(sql).pending(), 0, 'the pass in flight marked its row before dispose returned');
      assert.equal((await sink.stored()).filter((l) => l.transactionId === 'tx-wake-1').length, 1);
      assert.equal(pending.size, 0, 'no timer left');
      relay.wake();
      assert.equal(pending.size, 0, 'a wake after dispose schedules nothing');
    });
  });
}
