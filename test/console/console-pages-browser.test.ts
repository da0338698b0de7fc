/**
 * The console's day-to-day pages in Chromium (playwright-core) against `npm start` on its embedded defaults (PGlite,
 * the development identity, which honours Easy Auth's `x-ms-client-principal` header so that an analyst can act):
 * the queue's amount, user and zoned times and its search; a page that cannot load says what happened and what to
 * do (404, 403, 5xx, no connection) instead of "Loading…"; the drift page at 1,366 px with its empty state and
 * y-axis. Every page passes axe-core's WCAG 2 A/AA checks; locators go by role and label. Screenshots are kept in
 * the folder the test names.
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
import { ANALYST, SHOTS, WIDE, open, overflow, reviewed, shot } from './pages';
import { http } from '../support/http';

describe('the console pages in Chromium under npm start', { skip: skipWithoutBrowser() }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-console-pages-'));
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

  it('queue: amount and currency, user, age, zoned times; search by transaction id and by user id', async (t) => {
    t.diagnostic(`screenshots in ${SHOTS}`);
    await open(lead, host.url, '#/queue', 'Queue');
    const head = await lead.locator('thead th').allTextContents();
    assert.deepEqual(head.slice(0, 7), ['Case', 'Decided', 'Age', 'SLA', 'Queue', 'Amount', 'User']);
    const first = await lead.locator('tbody tr').first().locator('td').allTextContents();
    assert.match(first[1] ?? '', /\b(UTC|GMT)/, `the decision time has its zone: ${first[1]}`);
    assert.match(first[2] ?? '', /^\d+ (s|min)$/, 'its age');
    assert.equal(first[5], '2,500.00 EUR');
    assert.equal(first[6], 'user-tx-cp-1');
    assert.equal(await overflow(lead), 0, 'the queue fits 1,366 px');
    assert.deepEqual(await violations(lead), []);
    await shot(lead, 'queue');

    await lead.getByLabel('Transaction or user id').fill('tx-cp-2');
    await lead.getByRole('button', { name: 'Search' }).click();
    await lead.waitForFunction(`location.hash.includes('transactionId=tx-cp-2')`);
    // the page before listed both cases: the search's page lists the other no more
    await lead.locator('tbody tr', { hasText: 'user-tx-cp-1' }).waitFor({ state: 'detached' });
    await lead.locator('tbody tr', { hasText: 'user-tx-cp-2' }).waitFor();
    assert.equal(await lead.locator('tbody tr').count(), 1, 'the one case of that transaction');

    await lead.getByLabel('Search by').selectOption('userId');
    await lead.getByLabel('Transaction or user id').fill('user-tx-cp-1');
    await lead.getByRole('button', { name: 'Search' }).click();
    await lead.locator('tbody tr', { hasText: 'user-tx-cp-1' }).waitFor();
    assert.equal(await lead.locator('tbody tr').count(), 1, "the user's one case");
    assert.equal(await lead.getByLabel('Search by').inputValue(), 'userId', 'the search is kept in the form');

    await lead.getByLabel('Transaction or user id').fill('nobody');
    await lead.getByRole('button', { name: 'Search' }).click();
    await lead.getByText('No case has the user id nobody.').waitFor();
    assert.deepEqual(await violations(lead), []);
  });

  it('errors: a missing case (404), a lead page as an analyst (403), a failed service (500, a 502 page), no connection', async () => {
    await open(lead, host.url, '#/case/999999', 'Not found');
    assert.match((await lead.locator('#failure-what').textContent()) ?? '', /No such case/);
    assert.match((await lead.locator('#failure-todo').textContent()) ?? '', /Check the address/);
    assert.ok(await lead.getByRole('link', { name: 'Back to the queue' }).isVisible());
    assert.ok(await lead.getByRole('button', { name: 'Try again' }).isVisible());
    assert.equal(await lead.locator('#status.error').count(), 1, 'the live region says it too');
    assert.deepEqual(await violations(lead), []);
    await shot(lead, 'error-404');

    for (const hash of ['#/audit', '#/webhooks']) {
      await open(analyst, host.url, '#/queue', 'Queue'); // a page between, so that each failure is a new page
      await open(analyst, host.url, hash, 'Not allowed');
      assert.match((await analyst.locator('#failure-todo').textContent()) ?? '', /Ask a lead/);
    }
    assert.deepEqual(await violations(analyst), []);
    await shot(analyst, 'error-403');
    const nav = analyst.getByRole('navigation', { name: 'Console' });
    assert.equal(await nav.getByRole('link', { name: 'Webhooks' }).count(), 0, 'an analyst has no webhooks link');
    assert.equal(await nav.getByRole('link', { name: 'Queue' }).count(), 1);

    // the service failing, then the network: from the page before, the failure replaces it
    await open(lead, host.url, '#/queue', 'Queue');
    await lead.route('**/api/insights/rules**', (r) =>
      r.fulfill({ status: 500, contentType: 'application/problem+json', body: '{"title":"Internal error"}' }),
    );
    await lead.getByRole('link', { name: 'Rules' }).click();
    await lead.getByRole('heading', { level: 1, name: 'The service failed' }).waitFor();
    assert.match((await lead.locator('#failure-what').textContent()) ?? '', /500: Internal error/);
    await lead.unroute('**/api/insights/rules**');
    await lead.route('**/api/insights/rules**', (r) =>
      r.fulfill({ status: 502, contentType: 'text/html', body: '<html><body>Bad gateway</body></html>' }),
    );
    await lead.getByRole('button', { name: 'Try again' }).click();
    await lead.getByText('The service answered 502: HTTP 502', { exact: true }).waitFor();
    await lead.unroute('**/api/insights/rules**');
    await lead.route('**/api/insights/rules**', (r) => r.abort('connectionrefused'));
    await lead.getByRole('button', { name: 'Try again' }).click();
    await lead.getByRole('heading', { level: 1, name: 'No connection' }).waitFor();
    assert.deepEqual(await violations(lead), []);
    await lead.unroute('**/api/insights/rules**');
    await lead.getByRole('button', { name: 'Try again' }).click();
    await lead.getByRole('heading', { level: 1, name: 'Rules' }).waitFor();
  });

  it('drift at 1,366 px: the empty state says why; a chart with many features fits, with a y-axis scale', async () => {
    await open(lead, host.url, '#/drift?days=2', 'Drift');
    assert.match(
      (await lead.locator('#drift-empty').textContent()) ?? '',
      /No hour has the 100 scored payments a PSI needs \(the most in one hour: 2; 2 in the window\)/,
    );
    assert.equal(await overflow(lead), 0);
    assert.deepEqual(await violations(lead), []);
    await shot(lead, 'drift-empty');

    // a model with 24 features and a day per point: the answer of a busy service, given to the page
    const features = Array.from({ length: 24 }, (_, i) => `feature_number_${i}`);
    const points = Array.from({ length: 7 }, (_, d) => ({
      start: new Date(Date.UTC(2026, 11, d + 1)).toISOString(),
      samples: d === 0 ? 40 : 5000,
      score: d === 0 ? null : 0.05 * d,
      features: Object.fromEntries(features.map((f, i) => [f, d === 0 ? null : (0.01 * i * d) % 0.4])),
    }));
    await lead.route('**/api/insights/drift**', (r) =>
      r.fulfill({
        json: {
          from: points[0]?.start,
          to: '2026-12-08T00:00:00.000Z',
          bucket: 'day',
          model: { name: 'fraud', version: '1.0.0' },
          threshold: 0.2,
          minSamples: 100,
          features,
          points,
          truncated: false,
        },
      }),
    );
    await open(lead, host.url, '#/drift?days=7', 'Drift');
    await lead.getByRole('img', { name: /PSI per day/ }).waitFor();
    assert.equal(await overflow(lead), 0, 'the page fits 1,366 px; the wide table scrolls in its region');
    const ticks = await lead.locator('svg .y-tick').allTextContents();
    assert.ok(ticks.length >= 3 && ticks[0] === '0.0', `a y-axis scale from 0: ${ticks.join(' ')}`);
    assert.ok(await lead.getByRole('region', { name: /PSI per bucket/ }).isVisible());
    assert.match((await lead.getByRole('row', { name: /40 \(fewer than 100\)/ }).textContent()) ?? '', /—/);
    assert.deepEqual(await violations(lead), []);
    await shot(lead, 'drift-chart');
    await lead.unrouteAll();
  });

  it('drift: a bucket with no neighbour is drawn as a dot (a line needs two points)', async () => {
    const day = (d: number): string => new Date(Date.UTC(2026, 11, d + 1)).toISOString();
    const points = [0, 1, 2].map((d) => ({
      start: day(d),
      samples: d === 1 ? 5000 : 0,
      score: d === 1 ? 0.12 : null,
      features: { amount_vs_usual: d === 1 ? 0.05 : null },
    }));
    await lead.route('**/api/insights/drift**', (r) =>
      r.fulfill({
        json: {
          ...{ from: day(0), to: day(3), bucket: 'day', model: { name: 'fraud', version: '1.0.0' } },
          ...{ threshold: 0.2, minSamples: 100, features: ['amount_vs_usual'], points, truncated: false },
        },
      }),
    );
    await open(lead, host.url, '#/drift?days=3', 'Drift');
    await lead.getByRole('img', { name: /PSI per day/ }).waitFor();
    // the chart's points are drawn after its image is labelled: wait (bounded) for both
    await eventually(
      () => lead.locator('svg circle.lone').count(),
      (n) => n === 2,
      'the score and the feature each showing their point',
      10_000,
    );
    await lead.unrouteAll();
  });
});
