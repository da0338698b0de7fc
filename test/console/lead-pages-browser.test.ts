/**
 * The lead's pages in Chromium (playwright-core) against `npm start` on its embedded defaults: webhooks (register
 * with the secret shown once, rotate, remove a secret, delete after a confirm, the dead letters and a redelivery)
 * and the serving page's promotions with no server path (an analyst is told why not). Every page passes axe-core's
 * WCAG 2 A/AA checks; locators go by role and label. Screenshots are kept in the folder the test names.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage, skipWithoutBrowser, violations } from '../support/browser';
import { stopChild } from '../support/child-process';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';
import { ANALYST, LEAD, SHOTS, WIDE, open, reviewed, shot } from './pages';
import { http } from '../support/http';

describe('the webhooks and serving pages in Chromium under npm start', { skip: skipWithoutBrowser() }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-console-lead-'));
  let host: LocalHost;
  let browser: Browser;
  let lead: Page;
  let analyst: Page;

  before(async () => {
    host = await startCaseHost(dir);
    for (const tx of ['tx-cp-1', 'tx-cp-2']) {
      const r = await http().post(`${host.url}/score`, reviewed(tx));
      assert.equal(r.json['decision'], 'review');
    }
    await eventually(
      async () => ((await http().get(`${host.url}/cases?status=open`)).json['cases'] as unknown[]).length,
      (n) => n === 2,
      'two open cases',
    );
    browser = await launchBrowser();
    lead = await newPage(browser);
    analyst = await newPage(browser, ANALYST);
    await lead.setViewportSize(WIDE);
    await analyst.setViewportSize(WIDE);
  });
  after(async () => {
    await browser?.close();
    await stopChild(host.child, 'npm start to exit after SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('webhooks: register (secret shown once), rotate, remove a secret, delete after a confirm', async (t) => {
    t.diagnostic(`screenshots in ${SHOTS}`);
    await lead.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await open(lead, host.url, '#/webhooks', 'Webhooks');
    assert.ok(await lead.getByText('No endpoint is registered').isVisible());
    assert.ok(await lead.getByText('No dead delivery.').isVisible());
    assert.deepEqual(await violations(lead), []);

    const url = 'http://127.0.0.1:9/hooks';
    await lead.getByLabel('Endpoint URL').fill(url);
    assert.ok(await lead.getByRole('checkbox', { name: 'review.opened' }).isChecked());
    await lead.getByRole('checkbox', { name: 'review.closed' }).uncheck();
    await lead.getByRole('button', { name: 'Register' }).click();
    await lead.locator('#new-secret').waitFor();
    const secret = (await lead.locator('#new-secret').textContent()) ?? '';
    assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
    assert.match((await lead.locator('#secret-warning').textContent()) ?? '', /shown only once/);
    await lead.getByRole('button', { name: 'Copy secret' }).click();
    await lead.waitForFunction(`/copied|selected/.test(document.getElementById('status')?.textContent ?? '')`);
    const row = lead.locator('tbody tr', { hasText: url });
    assert.match((await row.textContent()) ?? '', /review\.opened.*Secret 1/);
    assert.doesNotMatch((await row.textContent()) ?? '', /review\.closed/);
    assert.deepEqual(await violations(lead), []);
    await shot(lead, 'webhooks-registered');
    const listed = await http().get(`${host.url}/webhooks`, { headers: LEAD });
    const hooks = listed.json['webhooks'] as { url: string; events: string[] }[];
    assert.deepEqual(
      hooks.map((w) => [w.url, w.events]),
      [[url, ['review.opened']]],
    );
    assert.doesNotMatch(JSON.stringify(listed.json), new RegExp(secret.slice(6, 20)), 'the list never holds it');

    // a reload shows the secret no more
    await lead.reload();
    await lead.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    assert.equal(await lead.locator('#new-secret').count(), 0);

    await lead.getByRole('button', { name: `Add secret to ${url}` }).click();
    await lead.getByRole('heading', { name: `New secret: ${url} (secret 2)` }).waitFor();
    assert.notEqual(await lead.locator('#new-secret').textContent(), secret);
    await lead.getByRole('button', { name: `Remove secret 1 of ${url}` }).click();
    await lead.waitForFunction(`document.getElementById('status')?.textContent?.startsWith('Secret 1 removed')`);
    await lead.getByRole('button', { name: `Remove secret 1 of ${url}` }).waitFor({ state: 'detached' });
    const secrets = await lead.getByRole('list', { name: `Secrets of ${url}` }).textContent();
    assert.match(secrets ?? '', /^Secret 2/);
    assert.equal(
      await lead.getByRole('button', { name: `Remove secret 2 of ${url}` }).count(),
      0,
      'the last secret cannot be removed',
    );

    lead.once('dialog', (d) => void d.dismiss());
    await lead.getByRole('button', { name: `Delete endpoint ${url}` }).click();
    assert.equal(
      ((await http().get(`${host.url}/webhooks`, { headers: LEAD })).json['webhooks'] as unknown[]).length,
      1,
    );
    lead.once('dialog', (d) => {
      assert.match(d.message(), /Delete the endpoint/);
      void d.accept();
    });
    await lead.getByRole('button', { name: `Delete endpoint ${url}` }).click();
    await lead.getByText('No endpoint is registered').waitFor();
    assert.equal(
      ((await http().get(`${host.url}/webhooks`, { headers: LEAD })).json['webhooks'] as unknown[]).length,
      0,
    );
  });

  it("webhooks: the dead letters, each with Redeliver (the list's answer stands in for a day of failures)", async () => {
    // a delivery is dead only after 24 h of failed attempts (test/webhooks shows it with an injected clock): the
    // page's own answer is given here, and the redelivery's request is checked as the page sends it
    const dead = {
      id: '7',
      webhookId: '3',
      eventType: 'review.closed',
      messageId: 'msg_7',
      caseId: '1',
      transactionId: 'tx-cp-1',
      attempts: 31,
      createdAt: '2026-12-01T09:00:00.000Z',
      deadAt: '2026-12-02T09:10:00.000Z',
      lastError: 'http_503',
      lastStatus: 503,
    };
    let redelivered = '';
    await lead.route('**/api/webhooks/deliveries?**', (r) =>
      r.fulfill({ json: { deliveries: redelivered === '' ? [dead] : [] } }),
    );
    await lead.route('**/api/webhooks/deliveries/*/redeliver', (r) => {
      redelivered = `${r.request().method()} ${new URL(r.request().url()).pathname}`;
      return r.fulfill({ json: { redelivered: ['7'] } });
    });
    await open(lead, host.url, '#/webhooks', 'Webhooks');
    const row = lead
      .getByRole('table', { name: 'Dead deliveries, newest first' })
      .locator('tbody tr', { hasText: 'tx-cp-1' });
    assert.match((await row.textContent()) ?? '', /review\.closed.*Case 1.*tx-cp-1.*31.*http_503 \(HTTP 503\)/);
    assert.deepEqual(await violations(lead), []);
    await shot(lead, 'webhooks-dead-letters');
    await lead.getByRole('button', { name: 'Redeliver delivery 7' }).click();
    await lead.getByText('No dead delivery.').waitFor();
    await lead.waitForFunction(`document.getElementById('status')?.textContent?.startsWith('Delivery 7 is due again')`);
    assert.equal(redelivered, '/api/webhooks/deliveries/7/redeliver'.replace(/^/, 'POST '));
    assert.match((await lead.locator('#status').textContent()) ?? '', /Delivery 7 is due again/);
    await lead.unrouteAll();
  });

  it('serving: who promoted what and when, for leads; analysts are told why not; no server path', async () => {
    // a promotion needs a published version (a model upload, or a draft through four eyes, as
    // governance-browser.test.ts does): the audit trail's answer is given here, in the shape docs/audit.md gives
    const entry = (kind: string, action: string, at: string, from: unknown, to: unknown): unknown => ({
      id: `${kind}-${action}`,
      at,
      actor: 'lee',
      kind,
      name: kind === 'model' ? 'fraud' : 'fraud-rules',
      action,
      oldValue: from,
      newValue: to,
    });
    const pointer = (active: string | null, candidate?: string): unknown => ({
      active,
      previous: null,
      candidate: candidate === undefined ? null : { version: candidate, canaryPercent: 10, shadowPercent: 0 },
    });
    const kinds: string[] = [];
    await lead.route('**/api/audit?**', (r) => {
      const kind = new URL(r.request().url()).searchParams.get('kind') ?? '';
      kinds.push(kind);
      const events =
        kind === 'model'
          ? [entry('model', 'traffic', '2026-12-05T10:00:00.000Z', pointer('1.0.0'), pointer('1.0.0', '1.1.0'))]
          : kind === 'ruleset'
            ? [
                entry('ruleset', 'promote', '2026-12-05T11:00:00.000Z', pointer('1.0.0'), pointer('1.1.0')),
                entry('ruleset', 'approve', '2026-12-05T10:30:00.000Z', null, { version: '1.1.0' }),
              ]
            : [];
      return r.fulfill({ json: { events } });
    });
    await open(lead, host.url, '#/serving', 'Serving');
    assert.deepEqual(kinds.sort(), ['model', 'ruleset', 'signals']);
    const rows = await lead
      .getByRole('table', { name: 'Rollout changes, newest first' })
      .locator('tbody tr')
      .allTextContents();
    assert.equal(rows.length, 2, `promote, rollback and traffic only, newest first: ${rows.join(' | ')}`);
    assert.match(rows[0] ?? '', /(UTC|GMT)\s*lee\s*ruleset\s*fraud-rules\s*promote\s*active 1\.0\.0\s*active 1\.1\.0/);
    assert.match(rows[1] ?? '', /lee\s*model\s*fraud\s*traffic.*candidate 1\.1\.0 \(canary 10 %, shadow 0 %\)/);
    const signals = await lead.getByRole('table', { name: 'Signals' }).locator('tbody tr').allTextContents();
    assert.match(signals.join(' | '), /^default\s*1\.0\.0\s*none/, 'the shipped signals version serves here');
    await lead.getByText('Models: the full status').click();
    const text = (await lead.locator('main').textContent()) ?? '';
    assert.ok(!text.includes(process.cwd()), 'no server path');
    assert.doesNotMatch(text, /"(\/|[A-Za-z]:\\)[^"]*"/, 'no absolute path in the status');
    assert.deepEqual(await violations(lead), []);
    await shot(lead, 'serving');
    await lead.unrouteAll();

    await open(analyst, host.url, '#/serving', 'Serving');
    assert.match((await analyst.locator('#promotions-none').textContent()) ?? '', /Only leads read the audit trail/);
    assert.deepEqual(await violations(analyst), []);
  });
});
