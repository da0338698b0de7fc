/**
 * The case screen's signals in Chromium under `npm start` (PGlite, the development identity) on a copy of the
 * bundled models folder: a case decided on the shipped signals (1.0.0: features, no aggregate) shows the feature
 * its rule read as mattered and says that no aggregate is keyed by the card; after uploading signals 1.1.0
 * (`card_users_1h`) and ruleset 1.1.0 (examples/signals/), the case of the third user on one card shows
 * `card_users_1h` = 3 first, with its definition and the rule that read it, and the card's recent activity; a case
 * without signals says it was scored before signals were recorded. Found by role and name; every page passes axe.
 */
import assert from 'node:assert/strict';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { copyBundled } from '../model-rollout/support/models';
import { launchBrowser, newPage, skipWithoutBrowser, violations } from '../support/browser';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';

const ROOT = path.resolve(__dirname, '../../..');

describe('the case screen shows signals, in Chromium under npm start', { skip: skipWithoutBrowser() }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-case-signals-'));
  let models: Awaited<ReturnType<typeof copyBundled>>;
  let host: LocalHost;
  let browser: Browser;
  let page: Page;

  const getJson = async <T>(route: string): Promise<T> => {
    const res = await fetch(`${host.url}${route}`);
    assert.equal(res.status, 200, route);
    return (await res.json()) as T;
  };
  const score = async (body: Record<string, unknown>): Promise<{ decision: string; rules?: { id: string }[] }> => {
    const res = await fetch(`${host.url}/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200);
    return (await res.json()) as { decision: string; rules?: { id: string }[] };
  };
  const upload = async (example: string, target: string): Promise<void> => {
    const to = path.join(models.dir, target);
    await fs.mkdir(path.dirname(to), { recursive: true });
    await fs.copyFile(path.join(ROOT, 'examples', 'signals', example), to);
  };
  /** The id of the case of `tx`, once the intake opened it. */
  const caseOf = async (tx: string): Promise<string> => {
    const list = await eventually(
      () => getJson<{ cases: { id: string; transactionId: string }[] }>('/cases?status=open'),
      (l) => l.cases.some((c) => c.transactionId === tx),
      `the case of ${tx}`,
      30_000,
    );
    return list.cases.find((c) => c.transactionId === tx)?.id ?? '';
  };
  const openCase = async (id: string): Promise<void> => {
    await page.goto(`${host.url}/console#/case/${id}`);
    await page.waitForSelector(`main h1:text-is("Case ${id}")`);
  };

  before(async () => {
    models = await copyBundled();
    host = await startCaseHost(dir, { MODEL_DIR: models.dir });
    browser = await launchBrowser();
    page = await newPage(browser);
  });
  after(async () => {
    await browser?.close();
    if (host !== undefined) await stopChild(host.child, 'npm start to exit after SIGTERM');
    await models?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shipped signals: the feature the rule read mattered; no aggregate is keyed by the card', async () => {
    const r = await score(
      validEvent({ transactionId: 'tx-sig-1', userId: 'u-sig-1', amount: 2500, deviceId: 'dev-x' }),
    );
    assert.equal(r.decision, 'review');
    await openCase(await caseOf('tx-sig-1'));
    const signals = page.getByRole('region', { name: 'Signals', exact: true });
    assert.match((await signals.locator('#signals-summary').textContent()) ?? '', /^Signals default 1\.0\.0\./);
    const table = signals.getByRole('table');
    const first = await table.getByRole('row').nth(1).getByRole('cell').allTextContents();
    assert.equal(first[0], 'new_device');
    assert.equal(first[1], '1');
    assert.match(first[3] ?? '', /rule large-amount-new-device/);
    const activity = page.getByRole('region', { name: 'Recent activity', exact: true });
    assert.match(
      (await activity.getByRole('region', { name: 'Card', exact: true }).textContent()) ?? '',
      /No aggregate is keyed by the card in signals default 1\.0\.0\./,
    );
    assert.deepEqual(await violations(page), []);
  });

  it('signals and ruleset 1.1.0: the third user on one card shows card_users_1h = 3 first and the card activity', async () => {
    await upload('default-1.1.0.json', 'features/default/1.1.0.json');
    await eventually(
      () => getJson<{ serving?: string }>('/signals/default'),
      (s) => s.serving === '1.1.0',
      'signals 1.1.0 serving',
      60_000,
    );
    await upload('fraud-rules-1.1.0.json', 'rulesets/fraud-rules/1.1.0.json');
    await eventually(
      () => getJson<{ serving?: string }>('/rulesets/fraud-rules'),
      (s) => s.serving === '1.1.0',
      'ruleset 1.1.0 serving',
      60_000,
    );
    for (const user of ['u-card-a', 'u-card-b', 'u-card-c'])
      await score(validEvent({ transactionId: `tx-${user}`, userId: user, cardFingerprint: 'tok_shared' }));
    await openCase(await caseOf('tx-u-card-c'));

    const signals = page.getByRole('region', { name: 'Signals', exact: true });
    assert.match((await signals.locator('#signals-summary').textContent()) ?? '', /^Signals default 1\.1\.0\./);
    const table = signals.getByRole('table', { name: /Signals of signals default 1\.1\.0/ });
    const head = await table.getByRole('columnheader').allTextContents();
    assert.deepEqual(head, ['Signal', 'Value', 'What it means', 'Why it mattered']);
    const first = await table.getByRole('row').nth(1).getByRole('cell').allTextContents();
    assert.equal(first[0], 'card_users_1h');
    assert.equal(first[1], '3');
    assert.match(first[2] ?? '', /different users paid with this card in the last hour/);
    assert.equal(first[3], 'rule card-shared-1h');
    assert.equal(await table.getByRole('row').count(), 1 + 18, 'every signal of 1.1.0');

    const activity = page.getByRole('region', { name: 'Recent activity', exact: true });
    const card = activity.getByRole('region', { name: 'Card', exact: true });
    const row = await card.getByRole('table', { name: 'Recent activity of the card' }).getByRole('row').nth(1);
    assert.deepEqual((await row.getByRole('cell').allTextContents()).slice(0, 3), ['card_users_1h', '3', '1h']);
    assert.match(
      (await activity.getByRole('region', { name: 'User', exact: true }).textContent()) ?? '',
      /No aggregate is keyed by the user in signals default 1\.1\.0\./,
    );
    assert.match(
      (await activity.getByRole('region', { name: 'IP address', exact: true }).textContent()) ?? '',
      /No aggregate is keyed by the IP address/,
    );
    assert.deepEqual(await violations(page), []);
  });

  it('a case without signals says it was scored before signals were recorded', async () => {
    const id = await caseOf('tx-sig-1');
    // the answer for a case opened before signals were recorded: no signals, no activity
    await page.route(`**/api/cases/${id}`, async (route) => {
      const res = await route.fetch();
      const body = (await res.json()) as Record<string, unknown>;
      delete body['signals'];
      delete body['activity'];
      await route.fulfill({ response: res, json: body });
    });
    await openCase(id);
    const signals = page.getByRole('region', { name: 'Signals', exact: true });
    assert.equal(
      await signals.locator('#signals-empty').textContent(),
      'This payment was scored before signals were recorded.',
    );
    assert.equal(await signals.getByRole('table').count(), 0);
    assert.match(
      (await page.getByRole('region', { name: 'Recent activity', exact: true }).textContent()) ?? '',
      /scored before signals were recorded/,
    );
    assert.deepEqual(await violations(page), []);
    await page.unroute(`**/api/cases/${id}`);
  });
});
