/**
 * Rule changes on the real PostgreSQL server (a fresh schema) and on PGlite: a draft is checked as an upload is
 * (422 naming rule and column), its backtest over a decision log and labels whose answer is known, the four-eyes
 * rule (the author's approval is 403; a promote or canary of a draft not approved is 409 and reaches nothing),
 * an approved draft's document is what the rollout reads, two leads deciding at once: one wins, and a list
 * replayed as the logged decisions recorded it (a list they did not consult only with `useCurrentLists`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { migrate } from '../../lib/platform/sql/migrate';
import { CASE_DATABASE } from '../support/case-database';
import type { SqlClient } from '../../lib/platform/sql/sql-client';
import { EMPTY_VELOCITY } from '../../lib/domain/user-context';
import { AppError } from '../../lib/errors/errors';
import type { ArtifactAdmin } from '../../lib/http/admin-routes';
import { Identity } from '../../lib/identity/identity';
import { encodePrincipal } from '../../lib/identity/principal';
import type { AuditEntry } from '../../lib/governance/audit-log';
import { DraftBacktests } from '../../lib/governance/draft-backtest';
import { DraftStore } from '../../lib/governance/draft-store';
import { parseWindow } from '../../lib/governance/draft-bodies';
import { Drafts } from '../../lib/governance/drafts';
import { DecisionLog } from '../../lib/learning/decision-log';
import type { DecisionRecord } from '../../lib/learning/decision-record';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import { LabelStore } from '../../lib/learning/labels';
import { pgliteDb, serverDb } from '../cases/support';
import { eventually } from '../support/eventually';
import { unrefTimers } from '../../lib/platform/timers';

const NOW = Date.parse('2026-12-01T12:00:00.000Z');
const headers = (name: string, roles: string[]): { get(n: string): string | null } => {
  const v = encodePrincipal(name, roles);
  return { get: (n) => (n === 'x-ms-client-principal' ? v : null) };
};
const A = headers('lead-a', ['lead']);
const B = headers('lead-b', ['lead']);
const ANALYST = headers('ana', ['analyst']);

const BASE = {
  name: 'fraud-rules',
  version: '1.1.0',
  rules: [{ id: 'block-merchant', when: 'event.merchantId == "m-bad"', action: 'block' }],
};

/** The version serving, which the drafts' diffs compare with (as loaded: a rule's description defaults to ""). */
const SERVING = {
  name: 'fraud-rules',
  version: '1.0.0',
  rules: [
    { id: 'block-merchant', when: 'event.merchantId == "m-worse"', action: 'block', description: '' },
    { id: 'old-rule', when: 'event.amount > 5000', action: 'review', description: '' },
  ],
};

/** A draft reading a list the logged decisions consulted (`blocked_devices`) and one they did not. */
const LISTED = {
  name: 'fraud-rules',
  version: '1.2.0',
  lists: [
    { name: 'blocked_devices', key: 'deviceId' },
    { name: 'watched_devices', key: 'deviceId' },
  ],
  rules: [
    { id: 'blocked-device', when: 'in_list("blocked_devices", event.deviceId)', action: 'block' },
    { id: 'watched-device', when: 'in_list("watched_devices", event.deviceId)', action: 'review' },
  ],
};
/** When the payments the list draft is backtested on were decided (outside the other backtest's window). */
const LISTED_AT = NOW - 2 * 86_400_000;

/** A logged approve of device `d-bad` by a ruleset that found it on no list (it was blocked later). */
function loggedListed(tx: string): DecisionRecord {
  return {
    ...logged(tx, 'm-ok'),
    decidedAt: new Date(LISTED_AT).toISOString(),
    event: { transactionId: tx, merchantId: 'm-ok', deviceId: 'd-bad', amount: 20 },
    ruleset: { name: 'fraud-rules', version: '1.0.0' },
    lists: { blocked_devices: false },
  };
}

/** A logged approve at merchant `m`. */
function logged(tx: string, merchantId: string, decision = 'approve'): DecisionRecord {
  return {
    v: 1,
    transactionId: tx,
    decidedAt: new Date(NOW - 3_600_000).toISOString(),
    model: { name: 'fraud', version: '1.0.0' },
    features: {},
    velocity: { ...EMPTY_VELOCITY },
    score: 0.01,
    decision,
    rules: [],
    source: 'local',
    event: { transactionId: tx, merchantId, amount: 20 },
    hashed: [],
  } as unknown as DecisionRecord;
}

for (const make of [serverDb, pgliteDb]) {
  describe(`ruleset drafts on ${make().name}`, () => {
    const db = make();
    const dir = mkdtempSync(path.join(tmpdir(), 'test-drafts-'));
    let sql: SqlClient;
    let drafts: Drafts;
    const audit: AuditEntry[] = [];
    const promoted: unknown[] = [];
    const inner: ArtifactAdmin = {
      status: async () => ({}),
      rollback: async () => ({}),
      promote: async (_n, body) => void promoted.push(body),
      traffic: async (_n, body) => void promoted.push(body),
    };

    before(async () => {
      sql = await db.client();
      await migrate(sql, CASE_DATABASE);
      const store = new FolderLearningStore(dir);
      const log = new DecisionLog({
        store,
        writer: 'w1',
        queueMax: 100,
        batchMax: 100,
        flushMs: 1,
        timers: unrefTimers,
      });
      for (const r of [
        logged('t-1', 'm-bad'),
        logged('t-2', 'm-bad'),
        logged('t-3', 'm-bad'),
        logged('t-4', 'm-ok'),
        logged('t-5', 'm-ok', 'review'),
      ])
        log.append(r, NOW - 3_600_000);
      for (const tx of ['t-10', 't-11']) log.append(loggedListed(tx), LISTED_AT);
      await log.dispose();
      await new LabelStore(store, () => NOW).add([
        { transactionId: 't-1', label: 'fraud', reportedAt: new Date(NOW).toISOString() },
        { transactionId: 't-2', label: 'chargeback', reportedAt: new Date(NOW).toISOString() },
        { transactionId: 't-3', label: 'legit', reportedAt: new Date(NOW).toISOString() },
      ]);
      const draftStore = new DraftStore(() => sql);
      drafts = new Drafts({
        store: draftStore,
        backtests: new DraftBacktests({
          store: draftStore,
          learning: () => ({ store, hash: undefined }),
          thresholds: () => ({ review: 0.5, decline: 0.9 }),
          // today: d-bad is on both lists (added to blocked_devices after the payments were decided)
          lists: async () => ({ blocked_devices: ['d-bad'], watched_devices: ['d-bad'] }),
          wallClock: () => NOW,
          maxRecords: 1000,
          maxRunning: 1,
          chunk: 2,
        }),
        identity: new Identity({ mode: 'easyauth', devActor: { name: 'dev', roles: [] } }),
        rulesetName: 'fraud-rules',
        versions: async () => ['1.0.0'],
        read: async () => {
          throw new AppError('not_found', 'none');
        },
        record: async (e) => void audit.push(e),
        wallClock: () => NOW,
        serving: () => ({ version: '1.0.0', document: SERVING }),
      });
    });
    after(async () => {
      await sql.dispose();
      await db.cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    it('refuses a draft that does not compile, naming its rule and column, and one of a served version', async () => {
      const bad = { ...BASE, rules: [{ id: 'broken', when: 'event.merchantId ==', action: 'block' }] };
      const e = await drafts.create(A, 'fraud-rules', bad).catch((x: unknown) => x);
      assert.ok(e instanceof AppError && e.code === 'ruleset_invalid', String(e));
      assert.equal(e.errors[0]?.rule, 'broken');
      assert.equal(typeof e.errors[0]?.column, 'number');
      await assert.rejects(drafts.create(A, 'fraud-rules', { ...BASE, version: '1.0.0' }), { code: 'conflict' });
      await assert.rejects(drafts.create(ANALYST, 'fraud-rules', BASE), { code: 'forbidden' });
      assert.deepEqual(audit, [], 'nothing refused is audited');
    });

    it('refuses NUL in a document (created or uploaded) naming the field, before PostgreSQL sees it', async () => {
      const nul = { ...BASE, version: '1.0.9', rules: [{ ...BASE.rules[0], description: 'x\u0000' }] };
      const e = await drafts.create(A, 'fraud-rules', nul).catch((x: unknown) => x);
      assert.ok(e instanceof AppError && e.code === 'validation_failed', String(e));
      assert.deepEqual(
        e.errors.map((f) => f.path),
        ['rules.0.description'],
      );
      const up = await drafts.upload('rulesets/fraud-rules/1.0.9.json', Buffer.from(JSON.stringify(nul)));
      assert.equal(up.warn, true, 'refused, not retried');
      assert.match(up.text, /refused as a draft.*rules\.0\.description must not contain control character U\+0000/);
      await assert.rejects(drafts.get(A, 'fraud-rules', '1.0.9'), { code: 'not_found' });
      assert.deepEqual(audit, [], 'nothing refused is audited');
    });

    it("a draft's backtest gives the known answer, in chunks, stored with the draft", async () => {
      const d = await drafts.create(A, 'fraud-rules', BASE);
      assert.equal(d.state, 'draft');
      const window = { from: new Date(NOW - 86_400_000).toISOString(), to: new Date(NOW).toISOString() };
      await drafts.backtest(A, 'fraud-rules', '1.1.0', window);
      const b = (await eventually(
        () => drafts.backtestOf(A, 'fraud-rules', '1.1.0'),
        (x) => (x as { state: string }).state !== 'running',
        'the backtest to end',
        10_000,
      )) as { state: string; result: Record<string, unknown> };
      assert.equal(b.state, 'done', JSON.stringify(b));
      const r = b.result;
      assert.equal(r['decisions'], 5);
      assert.equal(r['labelled'], 3);
      // t-5 was held by a rule of the serving ruleset that the draft does not have: it is approved now
      assert.deepEqual(r['changes'], { 'approve→decline': 3, 'review→approve': 1 });
      assert.equal(r['fraudNowCaught'], 2);
      assert.equal(r['goodNowBlocked'], 1);
      assert.equal(r['goodNowHeld'], 0);
      assert.deepEqual(r['reviewQueue'], { current: 1, candidate: 0, days: 1, growthPerDay: -1 });
      assert.deepEqual(r['rules'], {
        'block-merchant': { hits: 3, labelled: 3, fraud: 2, precision: 0.6667, recall: 1 },
      });
      // records logged before memberships were: nothing to replay here (the draft reads no list)
      assert.deepEqual(r['lists'], {
        recordsWithoutMemberships: 0,
        currentEntries: [],
        notReplayed: [],
        useCurrentLists: false,
      });
    });

    it("the author's approval is 403; a promote or a canary before approval is 409 and reaches nothing", async () => {
      await assert.rejects(drafts.approve(A, 'fraud-rules', '1.1.0', {}), { code: 'conflict' }, 'not submitted yet');
      const submitted = await drafts.submit(A, 'fraud-rules', '1.1.0', { comment: 'please' });
      assert.equal(submitted.state, 'submitted');
      await assert.rejects(drafts.approve(A, 'fraud-rules', '1.1.0', {}), { code: 'forbidden' });
      const gated = drafts.gate(inner);
      await assert.rejects(gated.promote('fraud-rules', { version: '1.1.0' }), { code: 'draft_not_approved' });
      await assert.rejects(gated.traffic('fraud-rules', { candidate: '1.1.0', canaryPercent: 10 }), {
        code: 'draft_not_approved',
      });
      assert.deepEqual(promoted, []);
      assert.equal(await drafts.approvedDocument('fraud-rules', '1.1.0'), undefined);
      // a version without a draft (shipped or uploaded) goes through
      await gated.promote('fraud-rules', { version: '1.0.0' });
      assert.deepEqual(promoted, [{ version: '1.0.0' }]);
    });

    it('two leads deciding at once: one wins, the other gets 409; then promote reaches the rollout', async () => {
      const C = headers('lead-c', ['lead']);
      const results = await Promise.allSettled([
        drafts.approve(B, 'fraud-rules', '1.1.0', { comment: 'ok' }),
        drafts.reject(C, 'fraud-rules', '1.1.0', { comment: 'no' }),
      ]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, JSON.stringify(results));
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      assert.equal((lost.reason as AppError).code, 'conflict');
      const d = await drafts.get(A, 'fraud-rules', '1.1.0');
      if (d.state === 'rejected') return; // the other lead won: nothing serves
      assert.equal(d.approver, 'lead-b');
      const served = JSON.parse((await drafts.approvedDocument('fraud-rules', '1.1.0')) ?? 'null') as typeof BASE;
      assert.deepEqual([served.version, served.rules[0]?.when], ['1.1.0', BASE.rules[0]?.when]);
      await drafts.gate(inner).promote('fraud-rules', { version: '1.1.0' });
      assert.deepEqual(promoted.at(-1), { version: '1.1.0' });
      assert.deepEqual(
        audit.map((e) => [e.actor, e.action]),
        [
          ['lead-a', 'draft'],
          ['lead-a', 'submit'],
          ['lead-b', 'approve'],
        ],
      );
    });

    it("a draft's diff against serving; promote of an approved draft goes through the admin's, by a lead only", async () => {
      const diff = await drafts.diff(ANALYST, 'fraud-rules', '1.1.0');
      assert.equal(diff.serving, '1.0.0');
      assert.deepEqual(
        diff.rules.map((r) => [r.id, r.change, r.lines.filter((l) => l.op !== 'same').map((l) => `${l.op} ${l.text}`)]),
        [
          [
            'block-merchant',
            'changed',
            ['del when: event.merchantId == "m-worse"', 'add when: event.merchantId == "m-bad"'],
          ],
          [
            'old-rule',
            'removed',
            ['del id: "old-rule"', 'del description: ""', 'del when: event.amount > 5000', 'del action: "review"'],
          ],
        ],
      );
      const actors: string[] = [];
      const admin = (actor: string): ArtifactAdmin => {
        actors.push(actor);
        return drafts.gate(inner);
      };
      await assert.rejects(drafts.promote(ANALYST, 'fraud-rules', '1.1.0', admin), { code: 'forbidden' });
      const d = await drafts.get(A, 'fraud-rules', '1.1.0');
      if (d.state !== 'approved') {
        // the rejecting lead won the race above: a rejected draft is not promoted
        await assert.rejects(drafts.promote(B, 'fraud-rules', '1.1.0', admin), { code: 'draft_not_approved' });
        assert.deepEqual(actors, []);
        return;
      }
      const before = promoted.length;
      await drafts.promote(A, 'fraud-rules', '1.1.0', admin); // the author may promote once another lead approved
      assert.deepEqual([promoted.length - before, promoted.at(-1), actors], [1, { version: '1.1.0' }, ['lead-a']]);
      await assert.rejects(drafts.promote(B, 'fraud-rules', '9.9.9', admin), { code: 'not_found' });
    });

    it('replays lists as recorded: a later entry changes nothing; a new list only with useCurrentLists', async () => {
      await drafts.create(A, 'fraud-rules', LISTED);
      const run = async (body: Record<string, unknown>): Promise<Record<string, unknown>> => {
        await drafts.backtest(A, 'fraud-rules', '1.2.0', body);
        const b = (await eventually(
          () => drafts.backtestOf(A, 'fraud-rules', '1.2.0'),
          (x) => (x as { state: string }).state !== 'running',
          'the list backtest to end',
          10_000,
        )) as { state: string; result: Record<string, unknown> };
        assert.equal(b.state, 'done', JSON.stringify(b));
        return b.result;
      };
      const window = {
        from: new Date(LISTED_AT - 3_600_000).toISOString(),
        to: new Date(NOW - 86_400_000).toISOString(),
      };
      const asRecorded = await run(window);
      assert.equal(asRecorded['decisions'], 2);
      assert.deepEqual(asRecorded['changes'], {}, 'd-bad was blocked after these payments: no change credited');
      assert.deepEqual(asRecorded['lists'], {
        recordsWithoutMemberships: 0,
        currentEntries: [],
        notReplayed: [{ list: 'watched_devices', rules: ['watched-device'], records: 2 }],
        useCurrentLists: false,
      });
      const withToday = await run({ ...window, useCurrentLists: true });
      assert.deepEqual(withToday['changes'], { 'approve→review': 2 });
      assert.deepEqual(withToday['lists'], {
        recordsWithoutMemberships: 0,
        currentEntries: ['watched_devices'],
        notReplayed: [],
        useCurrentLists: true,
      });
    });
  });
}

describe('the backtest window', () => {
  it('names each bad field', () => {
    const fields = (body: unknown): string[] => {
      try {
        parseWindow(body);
        return [];
      } catch (e) {
        return (e as AppError).errors.map((f) => f.path);
      }
    };
    assert.deepEqual(fields({}), ['from', 'to']);
    assert.deepEqual(fields({ from: '2026-12-02T00:00:00Z', to: '2026-12-01T00:00:00Z' }), ['to']);
    assert.deepEqual(fields({ from: '2026-01-01T00:00:00Z', to: '2026-12-01T00:00:00Z' }), ['to']);
    assert.deepEqual(fields({ from: '2026-11-30T00:00:00Z', to: '2026-12-01T00:00:00Z' }), []);
    assert.deepEqual(fields({ from: '2026-11-30T00:00:00Z', to: '2026-12-01T00:00:00Z', foo: 1 }), ['foo']);
    assert.deepEqual(fields(null), ['']);
    const day = { from: '2026-11-30T00:00:00Z', to: '2026-12-01T00:00:00Z' };
    assert.deepEqual(fields({ ...day, useCurrentLists: 'yes' }), ['useCurrentLists']);
    assert.deepEqual(parseWindow({ ...day, useCurrentLists: true }).useCurrentLists, true);
    assert.deepEqual(parseWindow(day).useCurrentLists, false);
  });
});
