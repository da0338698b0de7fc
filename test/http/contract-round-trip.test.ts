/**
 * The answers' serializers (fast-json-stringify, compiled from the contracts) write only what a contract declares:
 * real answers of the case service on PGlite (a case with signals, an escalation and a lead's lists, a closed one,
 * notes, a reassignment, the list, the analytics, who is acting) and representative answers of the other routes
 * (scoring with every optional field, a batch with a problem, readiness, webhooks, the audit trail, the insights)
 * must round-trip: the JSON a route sends, parsed, deep-equals what the subsystem returned. And a property a contract
 * does not declare is dropped (which is why these checks can fail).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { toNewCase } from '../../lib/cases/case-writer';
import { CaseService } from '../../lib/cases/case-service';
import type { CaseStore } from '../../lib/cases/case-store';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import * as cases from '../../lib/contracts/cases';
import * as insights from '../../lib/contracts/insights';
import * as scoring from '../../lib/contracts/score';
import * as webhooks from '../../lib/contracts/webhooks';
import { compileContract, type Contract } from '../../lib/http/contract';
import { Identity } from '../../lib/identity/identity';
import { encodePrincipal } from '../../lib/identity/principal';
import type { DecidedPayment } from '../../lib/scoring/scorer';
import { compileSignals } from '../../lib/signals/compile-signals';
import { pgliteDb, payment } from '../cases/support';
import { SHARED_WITH_CASES } from '../support/case-database';

const ROOT = path.resolve(__dirname, '../../..');

/** The JSON the route sends for `value`, parsed, deep-equals `value` as JSON. */
function roundTrips(contract: Contract, value: unknown): void {
  const sent = compileContract(contract).serialize(value as never);
  assert.deepEqual(JSON.parse(sent), JSON.parse(JSON.stringify(value)), `${contract.name} drops or changes a field`);
}

const escalation = {
  model: 'gpt-4o-mini',
  outcome: 'ok',
  latencyMs: 12,
  tokens: { prompt: 100, completion: 20 },
  costUsd: 0.0001,
  triggers: ['band', 'rule'],
  localDecision: 'review',
  llm: { riskLevel: 'high', score: 0.9, reasons: ['odd'], decision: 'decline' },
};

const scored = {
  transactionId: 'tx-1',
  score: 0.42,
  decision: 'review',
  reasons: [{ code: 'amount', contribution: 1.2, description: 'the amount' }],
  model: { name: 'fraud', version: '1.0.0' },
  source: 'openai',
  escalation,
  cache: 'hit',
  timing: { queueMs: 0.1, inferenceMs: 0.2, batchSize: 1 },
  rules: [{ id: 'large-amount', action: 'review' }],
  ruleset: { name: 'fraud-rules', version: '1.0.0' },
  profile: { id: 'default' },
  ruleErrors: ['broken-rule'],
};

describe('contract serializers: what they drop', () => {
  it('drops a property the contract does not declare', () => {
    const sent = compileContract(scoring.labels).serialize({ accepted: 1, duplicates: 0, extra: 'x' } as never);
    assert.deepEqual(JSON.parse(sent), { accepted: 1, duplicates: 0 });
    assert.throws(() => roundTrips(scoring.labels, { accepted: 1, duplicates: 0, extra: 'x' }), /drops/);
  });
});

describe('contract serializers: scoring, health, webhooks, audit, insights', () => {
  it('score: every optional field, and the fewest', () => {
    roundTrips(scoring.score, scored);
    roundTrips(scoring.score, {
      transactionId: 'tx-2',
      score: null,
      decision: 'review',
      reasons: [],
      model: { name: 'fraud', version: '1.0.0' },
      source: 'local',
      cache: 'degraded',
      timing: { queueMs: 0, inferenceMs: 0, batchSize: 2 },
    });
  });

  it('score/batch: results and problems in order', () => {
    roundTrips(scoring.scoreBatch, {
      results: [
        scored,
        {
          transactionId: 'tx-bad',
          error: {
            type: '/api/problems/validation_failed',
            title: 'Validation failed',
            status: 400,
            detail: '1 invalid field(s).',
            code: 'validation_failed',
            errors: [{ path: 'events.1.amount', message: 'must be a number' }],
          },
        },
        {
          error: {
            type: '/api/problems/overloaded',
            title: 'Overloaded',
            status: 503,
            detail: 'x',
            code: 'overloaded',
          },
        },
      ],
    });
  });

  it('health and labels', () => {
    roundTrips(scoring.healthLive, { status: 'live' });
    roundTrips(scoring.healthReady, { status: 'not_ready', model: null });
    roundTrips(scoring.healthReady, {
      status: 'ready',
      model: { name: 'fraud', version: '1.0.0' },
      waitingFor: [{ kind: 'ruleset', name: 'fraud-rules', serving: null, active: '1.1.0' }],
    });
    roundTrips(scoring.labels, { accepted: 3, duplicates: 1 });
  });

  it('webhooks: endpoints, generated secrets, deliveries of every state', () => {
    const view = {
      id: '1',
      url: 'https://merchant.example/h',
      events: ['review.opened', 'review.closed'],
      secrets: [{ n: 1, createdAt: '2026-12-01T08:00:00.000Z' }],
      createdBy: 'lead',
      createdAt: '2026-12-01T08:00:00.000Z',
      disabled: false,
    };
    roundTrips(webhooks.webhooksCreate, { webhook: view, secret: 'whsec_abc' });
    roundTrips(webhooks.webhooksCreate, { webhook: view });
    roundTrips(webhooks.webhooksList, { webhooks: [view, { ...view, id: '2', disabled: true }] });
    roundTrips(webhooks.webhooksAddSecret, { webhook: view, n: 2, secret: 'whsec_def' });
    roundTrips(webhooks.webhooksRemoveSecret, { webhook: view });
    roundTrips(webhooks.webhooksRedeliver, { redelivered: ['4', '5'] });
    const delivery = {
      id: '4',
      webhookId: '1',
      eventType: 'review.closed',
      messageId: 'msg_4',
      caseId: '9',
      transactionId: 'tx-9',
      attempts: 3,
      createdAt: '2026-12-01T08:00:00.000Z',
    };
    roundTrips(webhooks.webhooksDeliveries, {
      deliveries: [
        delivery,
        {
          ...delivery,
          id: '3',
          lastAttemptAt: '2026-12-01T09:00:00.000Z',
          deadAt: '2026-12-01T09:00:00.000Z',
          deliveredAt: '2026-12-01T09:00:00.000Z',
          lastError: 'HTTP 500',
          lastStatus: 500,
        },
      ],
      before: '3',
    });
  });

  it('audit trail and insights', () => {
    roundTrips(insights.auditList, {
      events: [
        {
          id: '1',
          at: '2026-12-01T08:00:00.000Z',
          actor: 'lead',
          kind: 'list',
          name: 'blocked_users',
          action: 'add',
          oldValue: null,
          newValue: { values: ['u-1'], ttlSeconds: 60 },
        },
      ],
      cursor: 'abc',
    });
    roundTrips(insights.insightsRules, {
      decisions: 10,
      labelled: 4,
      fraud: 2,
      rules: [{ id: 'r', fired: 3, labelled: 2, fraud: 1, precision: 0.5, recall: null, actions: { review: 3 } }],
      from: '2026-11-24T09:00:00.000Z',
      to: '2026-12-01T09:00:00.000Z',
      truncated: false,
    });
    roundTrips(insights.insightsDrift, {
      from: '2026-11-24T09:00:00.000Z',
      to: '2026-12-01T09:00:00.000Z',
      bucket: 'day',
      model: { name: 'fraud', version: '1.0.0' },
      threshold: 0.2,
      minSamples: 50,
      features: ['amount'],
      points: [{ start: '2026-11-24T09:00:00.000Z', samples: 60, score: 0.01, features: { amount: null } }],
      truncated: true,
      note: 'no reference',
    });
    roundTrips(insights.insightsServing, { models: [{ name: 'fraud', active: '1.0.0' }], rulesets: null });
    roundTrips(insights.insightsRuleset, { name: 'fraud-rules', version: '1.0.0', document: { rules: [] } });
  });
});

describe('contract serializers: the case service on PGlite', () => {
  const db = pgliteDb();
  let store: CaseStore;
  let service: CaseService;
  const lead = new Headers({ 'x-ms-client-principal': encodePrincipal('lee', ['lead']) });
  const now = Date.parse('2026-12-01T10:00:00Z');
  before(async () => {
    store = await SqlCaseStore.create(await db.client(), undefined, SHARED_WITH_CASES);
    service = new CaseService({
      store,
      identity: new Identity({ mode: 'development', devActor: { name: 'dev', roles: ['analyst'] } }),
      wallClock: () => now,
      lists: {
        listKey: () => 'userId',
        addToList: () => Promise.resolve({}),
        ruleset: { lists: new Map([['blocked_users', 'userId']]) },
      },
    });
    const signals = compileSignals(
      JSON.parse(readFileSync(path.join(ROOT, 'examples', 'signals', 'default-1.1.0.json'), 'utf8')) as unknown,
    );
    const decided = {
      event: payment({ transactionId: 'tx-sig', deviceId: 'd-1', email: 'a@example.com' }),
      result: {
        transactionId: 'tx-sig',
        score: 0.7,
        decision: 'review',
        reasons: [{ code: 'rule:large', contribution: 0, description: 'large' }],
        rules: [{ id: 'large', action: 'review' }],
        ruleset: { name: 'fraud-rules', version: '1.1.0' },
        model: { name: 'fraud', version: '1.0.0' },
        escalation,
      },
      signals: { version: signals, row: new Float64Array(signals.names.length).fill(2) },
    } as unknown as DecidedPayment;
    const withSignals = toNewCase(decided, now - 3_600_000, {
      ruleset: { name: 'fraud-rules', version: '1.1.0', document: { rules: [{ id: 'large', when: 'true' }] } },
    });
    const plain = { ...toNewCase({ ...decided, signals: undefined } as unknown as DecidedPayment, now - 7_200_000) };
    await store.open([withSignals, { ...plain, transactionId: 'tx-plain' }], now - 60_000);
    await store.open([{ ...plain, transactionId: 'tx-next', decidedAt: now - 60_000 }], now - 30_000);
  });
  after(async () => {
    await store.dispose();
    await db.cleanup();
  });

  it('list, detail with signals and activity, notes, reassignment, verdict, analytics, me', async () => {
    const page = await service.list(lead, new URLSearchParams('order=oldest'));
    assert.equal(page.cases.length, 3);
    roundTrips(cases.casesList, page);
    const [plain, sig] = page.cases;
    assert.equal(sig?.transactionId, 'tx-sig');
    assert.ok(plain !== undefined && sig !== undefined);
    const detail = await service.get(lead, sig.id);
    assert.ok(detail.signals !== undefined && detail.activity !== undefined, 'the case kept its signals');
    assert.deepEqual(detail.lists, [{ name: 'blocked_users', key: 'userId' }], "a lead sees the ruleset's lists");
    roundTrips(cases.casesGet, detail);
    roundTrips(cases.casesNotes, { case: await service.addNote(lead, sig.id, { text: 'looked at it' }) });
    roundTrips(cases.casesAssign, { case: await service.assign(lead, sig.id, { assignee: 'ann' }) });
    const v = await service.verdict(lead, plain.id, { verdict: 'legit', reason: 'known customer' });
    roundTrips(cases.casesVerdict, v);
    const closed = await service.get(lead, plain.id);
    assert.equal(closed.case.state, 'closed');
    roundTrips(cases.casesGet, closed);
    roundTrips(cases.casesAnalytics, await service.analytics(lead, new URLSearchParams()));
    roundTrips(cases.me, service.me(lead));
    const next = await service.next(lead, new URLSearchParams());
    assert.equal(next?.transactionId, 'tx-next');
    roundTrips(cases.casesNext, { case: next });
  });
});
