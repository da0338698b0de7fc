/**
 * The case queue under `npm start` on its embedded defaults (PGlite in a temporary folder, the development
 * identity): a payment the ruleset sends to review opens one case, once per transaction; `next` hands it out; a
 * verdict closes it and its label is in the dataset export (delivered after the commit); the same verdict again is 200
 * and records nothing; another verdict is 409; twenty concurrent `next`
 * calls get twenty distinct cases; case ids follow decision order; bad input (an unknown or repeated query parameter
 * included) is a problem naming every field; the documented body limits hold. With the example queues document
 * (examples/queues.json): a case is routed to a named queue by its rule; take next with a filter returns a matching
 * case (204 when none matches); `assignee=me` lists the caller's cases; a lead reassigns one; the analytics answer.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodePrincipal } from '../../lib/identity/principal';
import { exportDataset } from '../../lib/learning/dataset';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { eventually } from '../support/eventually';
import { startCaseHost, startLocalHost, type LocalHost } from '../support/local-host';

/** A payment the shipped ruleset reviews: 1000 or more from a device the user has not used before. */
function reviewed(tx: string, userId = `user-${tx}`): Record<string, unknown> {
  return validEvent({ transactionId: tx, userId, amount: 2500, deviceId: `dev-new-${tx}` });
}

function as(name: string, roles: readonly string[] = ['analyst']): Record<string, string> {
  return { 'x-ms-client-principal': encodePrincipal(name, roles) };
}

interface CaseBody {
  id: string;
  transactionId: string;
  state: string;
  assignee?: string;
  verdict?: string;
  payment: { amount: number };
  rules: { id: string }[];
}

describe('case queue under npm start (PGlite, development identity)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-cases-http-'));
  let host: LocalHost;
  let api: string;
  const post = (route: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${api}/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const listOpen = async (): Promise<CaseBody[]> => {
    const res = await fetch(`${api}/cases?status=open&order=oldest`, { headers: as('lister') });
    assert.equal(res.status, 200);
    return ((await res.json()) as { cases: CaseBody[] }).cases;
  };

  before(async () => {
    host = await startCaseHost(dir, { CASE_QUEUES_FILE: path.resolve(__dirname, '../../../examples/queues.json') });
    api = host.url;
  });
  after(async () => {
    await stopChild(host.child, 'npm start to exit after SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('says who is acting, and that it is a development identity', async () => {
    const me = (await (await fetch(`${api}/me`)).json()) as Record<string, unknown>;
    assert.deepEqual(me, { name: 'dev-analyst', roles: ['analyst', 'lead'], development: true, mode: 'development' });
    const alice = (await (await fetch(`${api}/me`, { headers: as('alice') })).json()) as Record<string, unknown>;
    assert.equal(alice['name'], 'alice');
    const bad = await fetch(`${api}/me`, { headers: { 'x-ms-client-principal': 'not base64 !' } });
    assert.equal(bad.status, 401);
    assert.equal(bad.headers.get('content-type'), 'application/problem+json');
    const problem = (await bad.json()) as { code: string; errors: { path: string }[] };
    assert.equal(problem.code, 'unauthenticated');
    assert.deepEqual(
      problem.errors.map((e) => e.path),
      ['x-ms-client-principal'],
    );
  });

  it('a review opens one case; scoring it again opens none; next hands it out; a verdict closes it and labels it', async () => {
    const first = await post('score', reviewed('tx-case-1'));
    assert.equal(first.status, 200);
    assert.equal(((await first.json()) as { decision: string }).decision, 'review');
    assert.equal((await post('score', reviewed('tx-case-1'))).status, 200, 'the same transaction again');
    // a later review: once it has a case, the writer (first in, first out) has handled the duplicate before it
    assert.equal((await post('score', reviewed('tx-case-2'))).status, 200);
    const open = await eventually(listOpen, (cs) => cs.some((c) => c.transactionId === 'tx-case-2'), 'the second case');
    assert.deepEqual(
      open.map((c) => c.transactionId),
      ['tx-case-1', 'tx-case-2'],
      'one case per transaction',
    );
    assert.equal(open[0]?.payment.amount, 2500);
    assert.deepEqual(
      open[0]?.rules.map((r) => r.id),
      ['large-amount-new-device'],
    );
    assert.ok(!host.output().includes('user-tx-case-1'), 'payment data never reaches the logs');

    const next = await post('cases/next', {}, as('alice'));
    assert.equal(next.status, 200);
    const taken = ((await next.json()) as { case: CaseBody }).case;
    assert.equal(taken.transactionId, 'tx-case-1', 'the oldest open case');
    assert.equal(taken.assignee, 'alice');
    assert.equal(taken.state, 'assigned');

    const note = await post(`cases/${taken.id}/notes`, { text: 'card holder unreachable' }, as('alice'));
    assert.equal(note.status, 200);
    const verdict = await post(`cases/${taken.id}/verdict`, { verdict: 'fraud', reason: 'confirmed' }, as('alice'));
    assert.equal(verdict.status, 200);
    const closed = (await verdict.json()) as { case: CaseBody; label: Record<string, unknown> };
    assert.equal(closed.case.state, 'closed');
    assert.equal(closed.case.verdict, 'fraud');
    assert.deepEqual(
      { ...closed.label, reportedAt: typeof closed.label['reportedAt'] },
      { transactionId: 'tx-case-1', label: 'fraud', source: 'case', reportedAt: 'string' },
    );

    const retried = await post(`cases/${taken.id}/verdict`, { verdict: 'fraud', reason: 'confirmed' }, as('alice'));
    assert.equal(retried.status, 200, 'the same verdict again (a retry) answers the closed case');
    assert.deepEqual(await retried.json(), closed);
    const again = await post(`cases/${taken.id}/verdict`, { verdict: 'legit' }, as('bob'));
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { code: string }).code, 'conflict');

    // the verdict is in the audit trail (one entry: the retry and the refused second verdict record nothing), without
    // payment data
    const audit = await fetch(`${api}/audit?kind=case&name=${taken.id}`, { headers: as('lead-1', ['lead']) });
    assert.equal(audit.status, 200);
    const { events } = (await audit.json()) as { events: Record<string, unknown>[] };
    assert.deepEqual(
      events.map((e) => ({ actor: e['actor'], action: e['action'], oldValue: e['oldValue'], newValue: e['newValue'] })),
      [
        {
          actor: 'alice',
          action: 'verdict',
          oldValue: { state: 'assigned', assignee: 'alice' },
          newValue: { state: 'closed', verdict: 'fraud', reason: 'confirmed', list: null },
        },
      ],
    );
    assert.doesNotMatch(JSON.stringify(events), new RegExp(taken.transactionId));

    const detail = (await (await fetch(`${api}/cases/${taken.id}`, { headers: as('alice') })).json()) as {
      events: { action: string; actor: string }[];
    };
    assert.deepEqual(
      detail.events.map((e) => `${e.action}:${e.actor}`),
      ['opened:system', 'assigned:alice', 'note:alice', 'verdict:alice'],
    );

    const store = new FolderLearningStore(path.join(dir, 'decisions'));
    const day = Date.now();
    const rows = await eventually(
      async () => (await exportDataset(store, day - 86_400_000, day + 86_400_000)).rows,
      (rs) => rs.some((r) => r.transactionId === 'tx-case-1'),
      'the verdict in the dataset export',
    );
    const row = rows.find((r) => r.transactionId === 'tx-case-1');
    assert.deepEqual(row?.labels, ['fraud']);
    assert.equal(row?.label, 1);
  });

  it('twenty concurrent next calls get twenty distinct cases (cases opened on the batch path)', async () => {
    const events = Array.from({ length: 22 }, (_, i) => reviewed(`tx-batch-${i}`));
    const res = await post('score/batch', { events });
    assert.equal(res.status, 200);
    await eventually(
      listOpen,
      (cs) => cs.filter((c) => c.transactionId.startsWith('tx-batch-')).length === 22,
      '22 cases from the batch',
    );
    const got = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const r = await post('cases/next', {}, as(`analyst-${i}`));
        assert.equal(r.status, 200);
        return ((await r.json()) as { case: CaseBody }).case;
      }),
    );
    assert.equal(new Set(got.map((c) => c.id)).size, 20, 'twenty distinct cases');
    got.forEach((c, i) => assert.equal(c.assignee, `analyst-${i}`));
  });

  it('case ids follow decision order: a batch of reviews lists oldest first in its order, ids ascending', async () => {
    const txs = ['tx-order-1', 'tx-order-2', 'tx-order-3', 'tx-order-4'];
    const events = txs.map((tx) => ({ ...reviewed(tx), merchantId: 'm-order' }));
    const res = await post('score/batch', { events });
    assert.equal(res.status, 200);
    const decisions = ((await res.json()) as { results: { decision: string }[] }).results.map((r) => r.decision);
    assert.deepEqual(decisions, ['review', 'review', 'review', 'review']);
    const listed = async (): Promise<CaseBody[]> =>
      (
        (await (await fetch(`${api}/cases?merchantId=m-order&order=oldest`, { headers: as('lister') })).json()) as {
          cases: CaseBody[];
        }
      ).cases;
    const cases = await eventually(listed, (cs) => cs.length === txs.length, 'the four cases of the batch');
    assert.deepEqual(
      cases.map((c) => c.transactionId),
      txs,
    );
    const ids = cases.map((c) => Number(c.id));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'ids ascend in decision order',
    );
  });

  it('a review delivered through the embedded Service Bus opens its case too', async () => {
    const sent = await post('../local/queues/payments/messages', reviewed('tx-bus-1'));
    assert.ok(sent.status >= 200 && sent.status < 300, `queued: ${sent.status}`);
    await eventually(listOpen, (cs) => cs.some((c) => c.transactionId === 'tx-bus-1'), 'the case of tx-bus-1');
  });

  it('answers problems naming every bad field, 404 for an unknown case', async () => {
    const cursor = await fetch(`${api}/cases?cursor=garbage&status=nope&minScore=2&assigned=me`, {
      headers: as('alice'),
    });
    assert.equal(cursor.status, 400);
    assert.equal(cursor.headers.get('content-type'), 'application/problem+json');
    const p = (await cursor.json()) as { code: string; errors: { path: string; message: string }[] };
    assert.equal(p.code, 'validation_failed');
    assert.deepEqual(p.errors.map((e) => e.path).sort(), ['assigned', 'cursor', 'minScore', 'status']);
    assert.match(p.errors.find((e) => e.path === 'assigned')?.message ?? '', /^unknown query parameter/);
    const problemPaths = async (query: string): Promise<string[]> => {
      const res = await fetch(`${api}/cases?${query}`, { headers: as('alice') });
      assert.equal(res.status, 400, query);
      return ((await res.json()) as { errors: { path: string }[] }).errors.map((e) => e.path);
    };
    assert.deepEqual(await problemPaths('statuss=open'), ['statuss'], 'a misspelt filter is refused, not ignored');
    // the host passes a repeated parameter as one value joined by `,`, which no parameter accepts
    assert.deepEqual(await problemPaths('status=open&status=closed'), ['status']);
    assert.deepEqual(await problemPaths('order=oldest&order=oldest'), ['order']);
    const open = await listOpen();
    const id = open[0]?.id ?? '1';
    // the limits docs/cases.md gives: 16 KiB bodies, 4 000-character notes, 1 000-character reasons
    const tooBig = await post(`cases/${id}/notes`, { text: 'x'.repeat(16 * 1024) }, as('alice'));
    assert.equal(tooBig.status, 413);
    assert.equal(((await tooBig.json()) as { code: string }).code, 'payload_too_large');
    for (const [route, body, field] of [
      ['notes', { text: 'x'.repeat(4001) }, 'text'],
      ['verdict', { verdict: 'legit', reason: 'x'.repeat(1001) }, 'reason'],
    ] as const) {
      const res = await post(`cases/${id}/${route}`, body, as('alice'));
      assert.equal(res.status, 400, field);
      assert.deepEqual(
        ((await res.json()) as { errors: { path: string }[] }).errors.map((e) => e.path),
        [field],
      );
    }
    const bad = await post(`cases/${id}/verdict`, { verdict: 'maybe', extra: 1, addToList: { list: 7 } }, as('alice'));
    assert.equal(bad.status, 400);
    const b = (await bad.json()) as { errors: { path: string }[] };
    assert.deepEqual(b.errors.map((e) => e.path).sort(), ['addToList.list', 'extra', 'verdict']);
    const listByAnalyst = await post(
      `cases/${id}/verdict`,
      { verdict: 'fraud', addToList: { list: 'blocked_users' } },
      as('alice'),
    );
    assert.equal(listByAnalyst.status, 403, 'adding to a list needs the lead role');
    const missing = await fetch(`${api}/cases/999999999`, { headers: as('alice') });
    assert.equal(missing.status, 404);
    assert.equal((await fetch(`${api}/cases/abc`, { headers: as('alice') })).status, 404);
  });

  it("a lead's verdict adds the payment's user to a list through the lists path", async () => {
    await post('score', reviewed('tx-lead-1', 'user-to-block'));
    const c = await eventually(
      listOpen,
      (cs) => cs.some((x) => x.transactionId === 'tx-lead-1'),
      'the case of tx-lead-1',
    );
    const id = c.find((x) => x.transactionId === 'tx-lead-1')?.id ?? '';
    const v = await post(
      `cases/${id}/verdict`,
      { verdict: 'fraud', addToList: { list: 'blocked_users', ttlSeconds: 3600 } },
      as('lena', ['lead']),
    );
    assert.equal(v.status, 200);
    // the list entry is delivered by the outbox relay right after the verdict's commit
    let n = 0;
    const r = await eventually(
      async () =>
        (await (
          await post('score', validEvent({ transactionId: `tx-lead-2-${n++}`, userId: 'user-to-block' }))
        ).json()) as { decision: string; rules?: { id: string }[] },
      (x) => x.decision === 'decline',
      "the user blocked by the lead's verdict",
    );
    assert.equal(r.decision, 'decline');
    assert.deepEqual(
      r.rules?.map((x) => x.id),
      ['blocked-user'],
    );
  });
  it('routes by rule into a named queue; take next keeps to its filters; assignee=me; a lead reassigns; analytics', async () => {
    const merchantId = 'm-queues';
    assert.equal((await post('score', { ...reviewed('tx-q-1'), merchantId })).status, 200);
    const inQueue = async (): Promise<(CaseBody & { queue?: string; slaDueAt?: string })[]> => {
      const res = await fetch(`${api}/cases?merchantId=${merchantId}&queue=new-device`, { headers: as('quinn') });
      assert.equal(res.status, 200);
      return ((await res.json()) as { cases: (CaseBody & { queue?: string })[] }).cases;
    };
    const [routed] = await eventually(inQueue, (cs) => cs.length === 1, 'the case of tx-q-1 in queue new-device');
    assert.equal(routed?.queue, 'new-device', 'large-amount-new-device fired: the example routes it to new-device');
    const none = await post(`cases/next?queue=velocity&merchantId=${merchantId}`, undefined, as('quinn'));
    assert.equal(none.status, 204, 'no case of this merchant in velocity');
    const bad = await post('cases/next?status=open&queue=new-device', undefined, as('quinn'));
    assert.equal(bad.status, 400);
    assert.deepEqual(
      ((await bad.json()) as { errors: { path: string }[] }).errors.map((e) => e.path),
      ['status'],
    );
    const taken = await post(`cases/next?queue=new-device&merchantId=${merchantId}`, undefined, as('quinn'));
    assert.equal(taken.status, 200);
    const c = ((await taken.json()) as { case: CaseBody & { ageSeconds: number; slaBreached: boolean } }).case;
    assert.deepEqual([c.transactionId, c.assignee, c.slaBreached], ['tx-q-1', 'quinn', false]);
    assert.ok(c.ageSeconds >= 0);
    const mine = async (who: string, query = 'assignee=me', roles: string[] = ['analyst']): Promise<Response> =>
      fetch(`${api}/cases?${query}`, { headers: as(who, roles) });
    const ids = async (r: Response): Promise<string[]> =>
      ((await r.json()) as { cases: CaseBody[] }).cases.map((x) => x.transactionId);
    assert.deepEqual(await ids(await mine('quinn')), ['tx-q-1']);
    assert.deepEqual(await ids(await mine('rita')), []);
    assert.equal((await mine('quinn', 'assignee=rita')).status, 403, "an analyst cannot list another's cases");
    assert.equal((await post(`cases/${c.id}/assign`, { assignee: 'rita' }, as('quinn'))).status, 403, 'leads only');
    assert.equal((await post(`cases/${c.id}/assign`, { assignee: 'rita' }, as('lena', ['lead']))).status, 200);
    const audit = await fetch(`${api}/audit?kind=case&name=${c.id}`, { headers: as('lena', ['lead']) });
    const [entry] = ((await audit.json()) as { events: Record<string, unknown>[] }).events;
    assert.deepEqual(
      [entry?.['action'], entry?.['actor'], entry?.['oldValue'], entry?.['newValue']],
      ['assign', 'lena', { state: 'assigned', assignee: 'quinn' }, { state: 'assigned', assignee: 'rita' }],
      'the reassignment is audited',
    );
    assert.deepEqual(await ids(await mine('quinn')), []);
    assert.deepEqual(await ids(await mine('lena', 'assignee=rita', ['lead'])), ['tx-q-1']);
    const a = await fetch(`${api}/cases/analytics`, { headers: as('quinn') });
    assert.equal(a.status, 200);
    const figures = (await a.json()) as { from: string; to: string; total: { closed: number }; byQueue: unknown[] };
    assert.ok(figures.total.closed >= 1, 'the verdicts given above');
    assert.ok(Date.parse(figures.to) - Date.parse(figures.from) === 7 * 86_400_000, 'the last 7 days');
    assert.equal((await fetch(`${api}/cases/analytics?days=7`, { headers: as('quinn') })).status, 400);
  });
});

describe('case queue under npm start: a graceful stop loses no case', () => {
  it('writes the queued case on SIGTERM; the next start finds it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'test-cases-stop-'));
    const set = {
      PGLITE_DIR: path.join(dir, 'pglite'),
      DECISION_LOG_DIR: path.join(dir, 'decisions'),
      CASE_FLUSH_MS: '60000', // not by the timer within the test: the stop writes it
    };
    try {
      const first = await startLocalHost({ set, unset: ['CASE_STORE', 'IDENTITY_MODE'], ms: 120_000 });
      try {
        const res = await fetch(`${first.url}/score`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(reviewed('tx-stop-1')),
        });
        assert.equal(((await res.json()) as { decision: string }).decision, 'review');
      } finally {
        assert.equal(await stopChild(first.child, 'npm start to exit after SIGTERM'), 0);
      }
      const second = await startLocalHost({ set, unset: ['CASE_STORE', 'IDENTITY_MODE'], ms: 120_000 });
      try {
        const list = await fetch(`${second.url}/cases?status=open`, { headers: as('alice') });
        const cases = ((await list.json()) as { cases: CaseBody[] }).cases;
        assert.deepEqual(
          cases.map((c) => c.transactionId),
          ['tx-stop-1'],
        );
      } finally {
        await stopChild(second.child, 'npm start to exit after SIGTERM');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('case queue under npm start: a case database that cannot be reached', () => {
  it('never stops scoring; the case API answers 503 dependency_unavailable', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'test-cases-down-'));
    const host = await startLocalHost({
      // nothing listens on port 1
      set: { CASE_STORE: 'postgres', PG_HOST: '127.0.0.1', PG_PORT: '1', PG_USER: 'postgres', DECISION_LOG_DIR: dir },
      unset: ['IDENTITY_MODE'],
      ms: 120_000,
    });
    try {
      const res = await fetch(`${host.url}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(reviewed('tx-down-1')),
      });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { decision: string }).decision, 'review');
      const list = await fetch(`${host.url}/cases`, { headers: as('alice') });
      assert.equal(list.status, 503);
      assert.equal(((await list.json()) as { code: string }).code, 'dependency_unavailable');
      assert.ok(list.headers.get('retry-after') !== null);
      assert.match(host.output(), /cases: the case store could not be opened/);
    } finally {
      await stopChild(host.child, 'npm start to exit after SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
