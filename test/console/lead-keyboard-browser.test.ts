/**
 * The lead pages by keyboard only, in Chromium (playwright-core) against `npm start` on its embedded defaults
 * (PGlite, the development identity honouring `x-ms-client-principal`, so that two leads and an analyst act):
 * - a rule change: lead A drafts, runs the backtest and submits; lead B reads the changes against the serving
 *   version (the added rule, not the whole document), approves and promotes; the version then serves. An analyst
 *   reads the draft without controls; a promote before approval is 409.
 * - the lists page: a lead adds a value with an expiry and a reason, sees it, removes it with a reason; the audit
 *   page shows both reasons. An analyst reads the list without controls.
 * Focus moves by Tab only (bounded, named), actions by Enter and typing. Every page passes axe-core's WCAG 2 A/AA
 * checks; screenshots are kept in the folder the test names.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchBrowser, newPage, skipWithoutBrowser, violations } from '../support/browser';
import { stopChild } from '../support/child-process';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';
import { ANALYST, BLOCK_MERCHANT, LEAD_A, LEAD_B, SHOTS, WIDE, open, shot, small } from './pages';
import { http } from '../support/http';

/** Most Tab presses to reach one control. */
const MAX_TABS = 150;

/** Presses Tab until `target` has the focus (at most {@link MAX_TABS} times). */
async function tabTo(page: Page, target: Locator, what: string): Promise<void> {
  await target.waitFor();
  for (let i = 0; i < MAX_TABS; i++) {
    if (await target.evaluate((el) => el === el.ownerDocument.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${MAX_TABS} presses of Tab did not reach ${what}`);
}

/** Tabs to `target` and presses Enter. */
async function press(page: Page, target: Locator, what: string): Promise<void> {
  await tabTo(page, target, what);
  await page.keyboard.press('Enter');
}

const status = (page: Page, re: RegExp): Promise<unknown> =>
  page.waitForFunction(`${re.toString()}.test(document.getElementById('status')?.textContent ?? '')`);

describe('the lead pages by keyboard in Chromium under npm start', { skip: skipWithoutBrowser() }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-console-keyboard-'));
  let host: LocalHost;
  let browser: Browser;
  let a: Page;
  let b: Page;
  let analyst: Page;
  let serving: Record<string, unknown>;

  before(async () => {
    host = await startCaseHost(dir);
    for (const tx of ['tx-k-1', 'tx-k-2']) {
      const r = await http().post(`${host.url}/score`, small(tx));
      assert.equal(r.json['decision'], 'approve');
    }
    serving = (await http().get(`${host.url}/insights/ruleset`, { headers: LEAD_A })).json;
    assert.equal(serving['version'], '1.0.0');
    browser = await launchBrowser();
    a = await newPage(browser, LEAD_A);
    b = await newPage(browser, LEAD_B);
    analyst = await newPage(browser, ANALYST);
    for (const p of [a, b, analyst]) await p.setViewportSize(WIDE);
  });
  after(async () => {
    await browser?.close();
    await stopChild(host.child, 'npm start to exit after SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('lead A drafts, runs the backtest and submits, by keyboard', async (t) => {
    t.diagnostic(`screenshots in ${SHOTS}`);
    await open(a, host.url, '#/drafts', 'Rule changes');
    assert.deepEqual(await violations(a), []);
    await press(a, a.getByRole('link', { name: 'New draft' }), 'New draft');
    await a.getByRole('heading', { level: 1, name: 'New draft' }).waitFor();
    const doc = serving['document'] as { rules: unknown[] };
    await tabTo(a, a.getByLabel('Ruleset document (JSON)'), 'the document');
    await a.keyboard.press('ControlOrMeta+A');
    await a.keyboard.insertText(
      JSON.stringify({ ...doc, version: '1.1.0', rules: [...doc.rules, BLOCK_MERCHANT] }, null, 2),
    );
    await press(a, a.getByRole('button', { name: 'Check and save draft' }), 'Check and save draft');
    await a.getByRole('heading', { level: 1, name: 'Draft 1.1.0' }).waitFor();
    await press(a, a.getByRole('button', { name: 'Run backtest' }), 'Run backtest');
    await a.locator('#backtest-summary').waitFor({ timeout: 60_000 });
    assert.match((await a.locator('#backtest-summary').textContent()) ?? '', /^2 decisions from /);
    assert.deepEqual(await violations(a), []);
    await shot(a, 'keyboard-draft-backtest');
    await press(a, a.getByRole('button', { name: 'Submit for approval' }), 'Submit for approval');
    await a.locator('#draft-state', { hasText: 'submitted' }).waitFor();
    assert.equal(await a.getByRole('button', { name: 'Promote 1.1.0' }).count(), 0, 'not approved: no promote');
  });

  it('an analyst reads the draft without controls; a promote before approval is 409', async () => {
    await open(analyst, host.url, '#/drafts', 'Rule changes');
    assert.equal(await analyst.getByRole('link', { name: 'New draft' }).count(), 0);
    await open(analyst, host.url, '#/draft/1.1.0', 'Draft 1.1.0');
    assert.ok(await analyst.locator('#draft-read-only').isVisible());
    assert.equal(await analyst.getByRole('button').count(), 0, 'no button at all');
    assert.equal(await analyst.getByRole('textbox').count(), 0);
    assert.ok(await analyst.getByRole('heading', { name: 'Rule block-merchant: added' }).isVisible());
    assert.deepEqual(await violations(analyst), []);
    const early = await http().post(`${host.url}/rulesets/fraud-rules/drafts/1.1.0/promote`, {}, { headers: LEAD_B });
    assert.equal(early.status, 409, JSON.stringify(early.json));
    assert.match(String(early.json['type']), /draft_not_approved$/);
    const byAnalyst = await http().post(
      `${host.url}/rulesets/fraud-rules/drafts/1.1.0/promote`,
      {},
      { headers: ANALYST },
    );
    assert.equal(byAnalyst.status, 403);
  });

  it('lead B reads the changes against serving, approves and promotes by keyboard; the version serves', async () => {
    await open(b, host.url, '#/draft/1.1.0', 'Draft 1.1.0');
    const diff = b.getByRole('region', { name: 'Changes against serving 1.0.0' });
    assert.match(
      (await b.locator('#diff-summary').textContent()) ?? '',
      /1 rule changed \(1 added, 0 removed, 0 changed\)/,
    );
    const added = await diff.getByLabel('Rule block-merchant, added').textContent();
    assert.match(added ?? '', /\+ when: event\.merchantId == "m-bad"/);
    assert.equal(await diff.locator('pre').count(), 1, 'only the added rule, not the whole document');
    assert.deepEqual(await violations(b), []);
    await shot(b, 'keyboard-draft-diff');
    await tabTo(b, b.getByLabel('Comment'), 'the comment');
    await b.keyboard.type('backtest checked');
    await press(b, b.getByRole('button', { name: 'Approve' }), 'Approve');
    await b.locator('#draft-state', { hasText: 'approved' }).waitFor();
    await press(b, b.getByRole('button', { name: 'Promote 1.1.0' }), 'Promote 1.1.0');
    await status(b, /Draft 1\.1\.0: promoted/);
    assert.deepEqual(await violations(b), []);
    await shot(b, 'keyboard-draft-promoted');
    let n = 0;
    const blocked = await eventually(
      () => http().post(`${host.url}/score`, small(`tx-k-3-${n++}`)),
      (r) => (r.json['ruleset'] as { version?: string } | undefined)?.version === '1.1.0',
      'a decision by ruleset 1.1.0',
    );
    assert.equal(blocked.json['decision'], 'decline');
    const audit = await http().get(`${host.url}/audit?kind=ruleset`, { headers: LEAD_A });
    const rows = (audit.json['events'] as { actor: string; action: string }[]).map((e) => `${e.actor} ${e.action}`);
    assert.ok(rows.includes('lead-b promote'), rows.join(', '));
  });

  it('lists: a lead adds with an expiry and a reason, sees it, removes it with a reason, by keyboard', async () => {
    await open(a, host.url, '#/lists', 'Lists');
    const declared = await a.getByRole('table', { name: 'Declared lists' }).locator('tbody tr').allTextContents();
    assert.deepEqual(declared, ['blocked_usersuserId0']);
    assert.ok(await a.getByText('No entry.').isVisible());
    assert.deepEqual(await violations(a), []);
    await tabTo(a, a.getByLabel('Values (userId), one a line'), 'the values');
    await a.keyboard.type('u-kb-1');
    await tabTo(a, a.getByLabel('Expires after'), 'the expiry');
    await a.keyboard.press('ArrowDown'); // 1 day
    await tabTo(a, a.getByLabel('Reason', { exact: true }), 'the reason');
    await a.keyboard.type('chargeback reported');
    await a.keyboard.press('Enter');
    await status(a, /Added 1 value to blocked_users/);
    const row = a.getByRole('table', { name: 'Entries of blocked_users' }).locator('tbody tr', { hasText: 'u-kb-1' });
    await row.waitFor();
    assert.doesNotMatch((await row.textContent()) ?? '', /never/, 'it expires');
    assert.match((await a.getByRole('table', { name: 'Declared lists' }).textContent()) ?? '', /userId1/);
    assert.deepEqual(await violations(a), []);
    await shot(a, 'keyboard-lists-added');

    await press(a, a.getByRole('button', { name: 'Remove u-kb-1' }), 'Remove u-kb-1');
    await a.getByLabel('Reason for the removal').waitFor();
    assert.ok(await a.getByLabel('Reason for the removal').evaluate((el) => el === el.ownerDocument.activeElement));
    await a.keyboard.type('customer verified');
    assert.deepEqual(await violations(a), []);
    await a.keyboard.press('Enter');
    await status(a, /Removed u-kb-1 from blocked_users/);
    await a.getByText('No entry.').waitFor();
  });

  it('the audit page shows both reasons; the Name filter offers the lists; an analyst reads lists without controls', async () => {
    await open(a, host.url, '#/audit?kind=list', 'Audit');
    const rows = await a.locator('tbody tr').allTextContents();
    const row = (action: string, reason: string): boolean =>
      rows.some(
        (r) =>
          new RegExp(`lead-a\\s*list\\s*blocked_users\\s*${action}`).test(r) &&
          r.includes('u-kb-1') &&
          r.includes(reason),
      );
    assert.ok(row('add', '"reason":"chargeback reported"'), rows.join(' | '));
    assert.ok(row('remove', '"reason":"customer verified"'), rows.join(' | '));
    assert.deepEqual(await a.locator('#a-names option').evaluateAll((os) => os.map((o) => o.getAttribute('value'))), [
      'blocked_users',
    ]);
    assert.deepEqual(await violations(a), []);
    await shot(a, 'keyboard-lists-audit');

    await http().post(
      `${host.url}/list-entries/blocked_users`,
      { values: ['u-kb-2'], reason: 'seen by the analyst' },
      { headers: LEAD_A },
    );
    await open(analyst, host.url, '#/lists/blocked_users', 'Lists');
    await analyst.getByRole('table', { name: 'Entries of blocked_users' }).getByText('u-kb-2').waitFor();
    assert.equal(await analyst.getByRole('button', { name: /Remove/ }).count(), 0);
    assert.equal(await analyst.getByLabel('Reason', { exact: true }).count(), 0);
    assert.deepEqual(await violations(analyst), []);
    const refused = await http().post(
      `${host.url}/list-entries/blocked_users`,
      { values: ['u-kb-3'], reason: 'r' },
      { headers: ANALYST },
    );
    assert.equal(refused.status, 403);
  });
});
