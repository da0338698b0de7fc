/**
 * Webhooks under `npm start` (PGlite, the development identity, no Service Bus: webhooks only): a lead registers a
 * receiver on loopback; a payment the ruleset holds sends `review.opened`, its verdict `review.closed`, both verified
 * with the `standardwebhooks` package; the list never shows a secret; bad bodies are problems naming every field;
 * an analyst may not manage webhooks.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { encodePrincipal } from '../../lib/identity/principal';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';

const as = (name: string, roles: readonly string[]): Record<string, string> => ({
  'x-ms-client-principal': encodePrincipal(name, roles),
});
const LEAD = as('lena', ['lead']);

describe('webhooks under npm start', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-webhooks-http-'));
  let host: LocalHost;
  let api: string;
  let server: Server;
  let receiverUrl: string;
  const got: { headers: IncomingHttpHeaders; body: string }[] = [];
  const post = (route: string, body: unknown, headers: Record<string, string> = LEAD): Promise<Response> =>
    fetch(`${api}/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    host = await startCaseHost(dir);
    api = host.url;
  });
  after(async () => {
    await stopChild(host.child, 'npm start to exit after SIGTERM');
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('a held payment, then its verdict, reach the receiver as signed review.opened and review.closed', async () => {
    const created = await post('webhooks', { url: receiverUrl, events: ['review.opened', 'review.closed'] });
    assert.equal(created.status, 201);
    const { webhook, secret } = (await created.json()) as { webhook: { id: string }; secret: string };
    assert.match(secret, /^whsec_/);
    const listed = await (await fetch(`${api}/webhooks`, { headers: LEAD })).text();
    assert.ok(listed.includes(webhook.id) && !listed.includes(secret.slice(6)), 'listed, without its secret');

    const scored = await post(
      'score',
      validEvent({ transactionId: 'tx-wh-1', userId: 'user-wh-1', amount: 2500, deviceId: 'dev-new-wh-1' }),
      {},
    );
    assert.equal(((await scored.json()) as { decision: string }).decision, 'review');
    await eventually(
      () => Promise.resolve(got.length),
      (n) => n >= 1,
      'review.opened at the receiver',
      60_000,
    );
    const cases = (await (await fetch(`${api}/cases?status=open`, { headers: as('ann', ['analyst']) })).json()) as {
      cases: { id: string; transactionId: string }[];
    };
    const c = cases.cases.find((x) => x.transactionId === 'tx-wh-1') ?? assert.fail('the case');
    const verdict = await post(`cases/${c.id}/verdict`, { verdict: 'legit' }, as('ann', ['analyst']));
    assert.equal(verdict.status, 200);
    await eventually(
      () => Promise.resolve(got.length),
      (n) => n >= 2,
      'review.closed at the receiver',
      60_000,
    );

    const events = got.map((r) => {
      const h = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
      return new Webhook(secret).verify(r.body, h) as { type: string; data: Record<string, unknown> };
    });
    assert.deepEqual(
      events.map((e) => [e.type, e.data['transactionId'], e.data['verdict']]),
      [
        ['review.opened', 'tx-wh-1', undefined],
        ['review.closed', 'tx-wh-1', 'legit'],
      ],
    );
    assert.ok(!got.some((r) => r.body.includes('user-wh-1')), 'no user id in a payload');
    const deleted = await fetch(`${api}/webhooks/${webhook.id}`, { method: 'DELETE', headers: LEAD });
    assert.equal(deleted.status, 204);
  });

  it('bad bodies and queries name every field; an analyst may not manage webhooks', async () => {
    const bad = await post('webhooks', { url: 'http://merchant.example/h', events: ['review.lost'], extra: true });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('content-type'), 'application/problem+json');
    const problem = (await bad.json()) as { code: string; errors: { path: string }[] };
    assert.equal(problem.code, 'validation_failed');
    assert.deepEqual(
      problem.errors.map((e) => e.path),
      ['url', 'events.0', 'extra'],
    );
    const q = await fetch(`${api}/webhooks/deliveries?state=gone&x=1`, { headers: LEAD });
    assert.equal(q.status, 400);
    assert.deepEqual(
      ((await q.json()) as { errors: { path: string }[] }).errors.map((e) => e.path),
      ['x', 'state'],
    );
    const dead = await fetch(`${api}/webhooks/deliveries?state=dead`, { headers: LEAD });
    assert.deepEqual(await dead.json(), { deliveries: [] });
    const analyst = await post(
      'webhooks',
      { url: 'https://merchant.example/h', events: ['review.opened'] },
      as('ann', ['analyst']),
    );
    assert.equal(analyst.status, 403);
    assert.equal((await fetch(`${api}/webhooks/99/secrets/1`, { method: 'DELETE', headers: LEAD })).status, 404);
    assert.equal((await post('webhooks/deliveries/99/redeliver', {})).status, 404);
  });
});
