/**
 * Decisioning through the real functions on the local host, with Redis lists: a blocked user declines with
 * the block rule, another user answers as the model's thresholds say; the batch endpoint and the Service Bus
 * path decide exactly as the single endpoint; every response names the ruleset; under a ruleset canary the
 * response and `x-ruleset-version` name the version that decided for the user.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { configureSharedEngine } from '../../lib/app';
import { InProcessTopicPublisher } from '../../lib/async/result-publisher';
import { folderRulesetRepository } from '../../lib/decisioning/ruleset-repository';
import { inRulesetCanary } from '../../lib/decisioning/ruleset-traffic';
import { inlineBackendFactory } from '../../lib/inference/ort-session';
import type { LocalHost } from '../../local/host';
import { InProcessBus } from '../../local/in-process-bus';
import type { ServiceBusEmulator } from '../../local/service-bus-emulator';
import { startHostWithBus } from '../support/local-host';
import { validEvent } from '../support/events';
import { http, type HttpAnswer } from '../support/http';
import { testRedis } from '../support/redis';

const ROOT = path.resolve(__dirname, '../../..');
const MANIFEST = JSON.parse(readFileSync(path.join(ROOT, 'models/fraud/1.0.0.json'), 'utf8')) as {
  thresholds: { review: number; decline: number };
};

describe('decisioning over HTTP and Service Bus (local host, Redis lists)', () => {
  const r = testRedis();
  const bus = new InProcessBus();
  let host: LocalHost;
  let sb: ServiceBusEmulator;
  // the rulesets "container": the shipped 1.0.0 and a candidate 1.1.0 (same rules: only the version differs)
  const container = mkdtempSync(path.join(tmpdir(), 'rulesets-'));

  before(async () => {
    const shipped = readFileSync(path.join(ROOT, 'rulesets/fraud-rules/1.0.0.json'), 'utf8');
    mkdirSync(path.join(container, 'fraud-rules'));
    writeFileSync(path.join(container, 'fraud-rules/1.0.0.json'), shipped);
    const candidate = { ...(JSON.parse(shipped) as Record<string, unknown>), version: '1.1.0' };
    writeFileSync(path.join(container, 'fraud-rules/1.1.0.json'), JSON.stringify(candidate));
    configureSharedEngine({
      backendFactory: inlineBackendFactory({
        executionProviders: ['cpu'],
        intraOpThreads: 1,
        graphOptimization: 'all',
      }),
      publisher: new InProcessTopicPublisher(bus, 'risk-completed', false),
      decisioning: { repository: folderRulesetRepository(container) },
    });
    ({ host, sb } = await startHostWithBus({
      bus,
      redisPrefix: r.prefix,
      maxDeliveryCount: 10,
      maxMessageBatchSize: 16,
    }));
  });
  after(async () => {
    await sb.stop();
    await host.dispose();
    await r.cleanup();
    rmSync(container, { recursive: true, force: true });
  });

  const blocked = `u-blocked-${randomUUID()}`;

  it('a blocked user declines with the block rule; another user answers by the model thresholds', async () => {
    const add = await http().post(`${host.url}/api/lists/blocked_users`, JSON.stringify({ values: [blocked] }));
    assert.equal(add.status, 200, JSON.stringify(add.json));
    const res = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ userId: blocked })));
    assert.equal(res.status, 200);
    assert.equal(res.json['decision'], 'decline');
    assert.deepEqual(res.json['rules'], [{ id: 'blocked-user', action: 'block' }]);
    assert.deepEqual(res.json['ruleset'], { name: 'fraud-rules', version: '1.0.0' });
    assert.deepEqual(res.json['profile'], { id: 'default' });
    assert.equal(res.headers.get('x-ruleset-version'), '1.0.0');
    const reasons = res.json['reasons'] as { code: string; contribution: number }[];
    assert.deepEqual(
      reasons.find((x) => x.code.startsWith('rule:')),
      {
        code: 'rule:blocked-user',
        contribution: 0,
        description: 'The user is on the blocked_users list.',
      },
    );

    const other = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ userId: 'someone-else' })));
    const score = other.json['score'] as number;
    const t = MANIFEST.thresholds;
    const byModel = score >= t.decline ? 'decline' : score < t.review ? 'approve' : 'review';
    assert.equal(other.json['decision'], byModel);
    assert.deepEqual(other.json['rules'], []);
    assert.equal(other.headers.get('x-ruleset-version'), '1.0.0');
  });

  it('the gambling profile applies by merchantCategory and is echoed', async () => {
    const res = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ merchantCategory: '7995' })));
    assert.deepEqual(res.json['profile'], { id: 'gambling' });
  });

  it('the batch endpoint and the Service Bus path decide exactly as the single endpoint', async () => {
    // each path scores its own users (velocity counts a user's earlier payments), the same events otherwise
    const run = randomUUID();
    const events = (p: string) => [
      validEvent({ transactionId: `${p}1-${run}`, userId: `${p}-blocked-${run}` }),
      validEvent({ transactionId: `${p}2-${run}`, userId: `${p}-other-${run}`, merchantCategory: '7995' }),
      validEvent({ transactionId: `${p}3-${run}`, userId: `${p}-big-${run}`, amount: 5000, deviceId: 'new-dev' }),
    ];
    const blockedUsers = ['s', 'b', 'q'].map((p) => `${p}-blocked-${run}`);
    assert.equal(
      (await http().post(`${host.url}/api/lists/blocked_users`, JSON.stringify({ values: blockedUsers }))).status,
      200,
    );
    const pick = (x: Record<string, unknown>) => [x['decision'], x['rules'], x['ruleset'], x['profile'], x['score']];
    const single = await Promise.all(events('s').map((e) => http().post(`${host.url}/api/score`, JSON.stringify(e))));
    const batch = await http().post(`${host.url}/api/score/batch`, JSON.stringify({ events: events('b') }));
    assert.equal(batch.headers.get('x-ruleset-version'), '1.0.0');
    const items = batch.json['results'] as Record<string, unknown>[];
    items.forEach((item, i) => assert.deepEqual(pick(item), pick(single[i]?.json ?? {}), `batch item ${i}`));

    const queued = events('q');
    for (const e of queued) void bus.send('payments', { body: JSON.stringify(e), messageId: randomUUID() });
    await sb.idle();
    queued.forEach((e, i) => {
      const out = bus.messages('risk-completed').filter((m) => m.messageId === e['transactionId']);
      assert.equal(out.length, 1, `one result for event ${i}`);
      assert.deepEqual(pick(out[0]?.body as Record<string, unknown>), pick(single[i]?.json ?? {}), `queue result ${i}`);
    });
    assert.equal(single[0]?.json['decision'], 'decline');
    assert.deepEqual(single[2]?.json['rules'], [{ id: 'large-amount-new-device', action: 'review' }]);
  });

  it('refuses a card number as cardFingerprint (naming the field) and list values by index', async () => {
    const res = await http().post(
      `${host.url}/api/score`,
      JSON.stringify(validEvent({ cardFingerprint: '4111111111111111' })),
    );
    assert.equal(res.status, 400);
    assert.deepEqual(
      (res.json['errors'] as { path: string }[]).map((e) => e.path),
      ['cardFingerprint'],
    );
    assert.ok(!JSON.stringify(res.json).includes('4111111111111111'), 'the value is not echoed');
    const ok = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ cardFingerprint: 'fp_1a2b3c' })));
    assert.equal(ok.status, 200);
    const bad = await http().post(`${host.url}/api/lists/blocked_users`, JSON.stringify({ values: ['fine', 7] }));
    assert.equal(bad.status, 400);
    assert.deepEqual(
      (bad.json['errors'] as { path: string }[]).map((e) => e.path),
      ['values.1'],
    );
    const undeclared = await http().post(`${host.url}/api/lists/not_declared`, JSON.stringify({ values: ['x'] }));
    assert.equal(undeclared.status, 404);
  });

  it('pages a list and removes an entry', async () => {
    const page = await fetch(`${host.url}/api/lists/blocked_users`);
    const body = (await page.json()) as { entries: { value: string }[] };
    assert.ok(body.entries.some((e) => e.value === blocked));
    const garbage = await fetch(`${host.url}/api/lists/blocked_users?cursor=%25%25%25garbage`);
    assert.equal(garbage.status, 400);
    assert.match(garbage.headers.get('content-type') ?? '', /application\/problem\+json/);
    const problem = (await garbage.json()) as { errors: { path: string }[] };
    assert.deepEqual(
      problem.errors.map((e) => e.path),
      ['cursor'],
    );
    const remove = (body: unknown): Promise<HttpAnswer> =>
      http().post(`${host.url}/api/lists/blocked_users/remove`, body);
    assert.equal((await remove({ value: blocked })).status, 200);
    const again = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ userId: blocked })));
    assert.deepEqual(again.json['rules'], []);
    assert.equal((await remove({ value: blocked })).status, 404);
    const bad = await remove({ value: 7, extra: true });
    assert.equal(bad.status, 400);
    assert.deepEqual(
      (bad.json['errors'] as { path: string }[]).map((e) => e.path).sort(),
      ['extra', 'value'],
      'the unknown field and the bad value named',
    );
  });

  it('under a ruleset canary each user is decided by one version, named in the body and x-ruleset-version', async () => {
    const put = (body: unknown): Promise<Response> =>
      fetch(`${host.url}/api/rulesets/fraud-rules/traffic`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const bad = await put({ candidate: '1.1.0', canaryPercent: 150, extra: true });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('content-type'), 'application/problem+json');
    const problem = (await bad.json()) as { errors: { path: string }[] };
    assert.deepEqual(problem.errors.map((e) => e.path).sort(), ['canaryPercent', 'extra']);

    const set = await put({ candidate: '1.1.0', canaryPercent: 50 });
    assert.equal(set.status, 200, await set.clone().text());
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const userId = `canary-user-${i}`; // fixed ids: the split over them is fixed too (both versions occur)
      const res = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ userId })));
      const expected = inRulesetCanary(userId, 50) ? '1.1.0' : '1.0.0';
      assert.deepEqual(res.json['ruleset'], { name: 'fraud-rules', version: expected }, userId);
      assert.equal(res.headers.get('x-ruleset-version'), expected, userId);
      const again = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ userId })));
      assert.equal(again.headers.get('x-ruleset-version'), expected, `${userId} again`);
      seen.add(expected);
    }
    assert.equal(seen.size, 2, 'both versions decided for some of the 12 users');

    const off = await put({ candidate: '1.1.0' }); // both shares 0: the candidate ends
    assert.equal(off.status, 200);
    const status = (await (await fetch(`${host.url}/api/rulesets/fraud-rules`)).json()) as {
      serving?: string;
      candidate?: unknown;
    };
    assert.deepEqual([status.serving, status.candidate], ['1.0.0', undefined]);
  });
});
