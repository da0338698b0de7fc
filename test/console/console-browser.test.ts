/**
 * The analysts' console in a real browser (Debian's Chromium, driven by playwright-core, headless) against
 * `npm start` on its embedded defaults (PGlite, the development identity): take next → the case shows the payment
 * and its reasons → verdict `fraud` from the keyboard, confirmed → the case is closed, its label is in the dataset export,
 * the queue moves on. Every page passes axe-core's WCAG 2 A/AA checks, and the page works without a mouse.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { exportDataset } from '../../lib/learning/dataset';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import { launchBrowser, newPage, skipWithoutBrowser, violations } from '../support/browser';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';

interface CaseBody {
  id: string;
  transactionId: string;
  state: string;
  verdict?: string;
}

/** A payment the shipped ruleset reviews (1000 or more from a new device). */
function reviewed(tx: string): Record<string, unknown> {
  return validEvent({ transactionId: tx, userId: `user-${tx}`, amount: 2500, deviceId: `dev-new-${tx}` });
}

describe('the console in Chromium under npm start', { skip: skipWithoutBrowser() }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-console-'));
  let host: LocalHost;
  let browser: Browser;
  let page: Page;
  const heading = (): Promise<string | null> => page.textContent('main h1');

  before(async () => {
    host = await startCaseHost(dir);
    for (const tx of ['tx-ui-1', 'tx-ui-2', 'tx-ui-3']) {
      const res = await fetch(`${host.url}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(reviewed(tx)),
      });
      assert.equal(((await res.json()) as { decision: string }).decision, 'review');
    }
    await eventually(
      async () => ((await (await fetch(`${host.url}/cases?status=open`)).json()) as { cases: unknown[] }).cases,
      (cs) => cs.length === 3,
      'three open cases',
    );
    browser = await launchBrowser();
    page = await newPage(browser);
  });
  after(async () => {
    await browser?.close();
    await stopChild(host.child, 'npm start to exit after SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the queue and says the identity is a development one; Tab walks its controls in order', async () => {
    const res = await page.goto(`${host.url}/console`);
    assert.equal(res?.status(), 200);
    assert.match(res?.headers()['content-security-policy'] ?? '', /script-src 'self'/);
    await page.waitForSelector('main h1:text-is("Queue")');
    assert.match((await page.textContent('#who')) ?? '', /dev-analyst.*development identity/);
    assert.equal(await page.locator('tbody tr').count(), 3, 'three open cases listed');
    // the page's heading has the focus; Tab then walks its controls in reading order
    const order: string[] = [];
    for (let i = 0; i < 9; i++) {
      await page.keyboard.press('Tab');
      order.push(String(await page.evaluate('document.activeElement?.id || document.activeElement?.textContent')));
    }
    assert.deepEqual(order, [
      'take-next',
      'my-cases',
      'f-status',
      'f-queue',
      'f-assignee',
      'f-rule',
      'f-merchantId',
      'f-minScore',
      'Filter',
    ]);
    // each case's age and SLA (the default queue, general: 24 h)
    const first = await page.locator('tbody tr').first().locator('td').allTextContents();
    assert.match(first[2] ?? '', /^\d+ (s|min)$/, 'its age');
    assert.match(first[3] ?? '', /^Due /, 'its SLA');
    assert.equal(first[4], 'general');
    assert.deepEqual(await violations(page), []);
  });

  it('take next (key n) → the case shows the payment and its reasons → f closes it as fraud; the queue moves on', async () => {
    await page.keyboard.press('Escape');
    await page.locator('main').focus();
    await page.keyboard.press('n');
    await page.waitForSelector('main h1:text-matches("^Case \\\\d+$")');
    const caseId = ((await heading()) ?? '').replace('Case ', '');
    assert.match((await page.textContent('#payment-fields')) ?? '', /Amount\s*2,500\.00 EUR/);
    assert.match((await page.textContent('#payment-fields')) ?? '', /tx-ui-1/, 'the oldest open case');
    assert.ok((await page.locator('#reasons li').count()) > 0, 'its reasons');
    assert.match((await page.textContent('#rules-fired')) ?? '', /large-amount-new-device/);
    assert.deepEqual(await violations(page), []);

    // f asks first; Enter confirms; the verdict goes after the undo window (short here)
    await page.evaluate("localStorage.setItem('console.verdictUndoMs', '200')");
    await page.keyboard.press('f');
    await page.getByRole('dialog', { name: `Close case ${caseId} as fraud?` }).waitFor();
    await page.keyboard.press('Enter');
    await page.waitForFunction(`document.querySelector('main h1')?.textContent !== 'Case ${caseId}'`);
    assert.match((await page.textContent('#status')) ?? '', new RegExp(`Case ${caseId} closed as fraud`));
    assert.match((await heading()) ?? '', /^Case \d+$/, 'the next case is open');
    assert.notEqual(await heading(), `Case ${caseId}`);

    const closed = (await (await fetch(`${host.url}/cases/${caseId}`)).json()) as { case: CaseBody };
    assert.equal(closed.case.state, 'closed');
    assert.equal(closed.case.verdict, 'fraud');
    const store = new FolderLearningStore(path.join(dir, 'decisions'));
    const now = Date.now();
    const rows = await eventually(
      async () => (await exportDataset(store, now - 86_400_000, now + 86_400_000)).rows,
      (rs) => rs.some((r) => r.transactionId === 'tx-ui-1' && r.label === 1),
      'the verdict as a label in the dataset export',
    );
    assert.deepEqual(
      rows.map((r) => [r.transactionId, r.labels]),
      [['tx-ui-1', ['fraud']]],
      'only the closed case is labelled',
    );
  });

  it('rules, drift and serving pages show their figures and pass the accessibility check', async () => {
    await page.goto(`${host.url}/console#/rules`);
    await page.waitForSelector('main h1:text-is("Rules")');
    await page.waitForSelector('#rules-summary');
    assert.match((await page.textContent('#rules-summary')) ?? '', /^3 decisions .*; 1 labelled, 1 of them fraud\./);
    const row = page.locator('tbody tr', { hasText: 'large-amount-new-device' });
    assert.deepEqual(await row.locator('td').allTextContents(), [
      'large-amount-new-device',
      '3',
      '1',
      '1',
      '100.0 %',
      '100.0 %',
    ]);
    assert.deepEqual(await violations(page), []);

    await page.goto(`${host.url}/console#/drift`);
    await page.waitForSelector('main h1:text-is("Drift")');
    assert.match((await page.textContent('#drift-summary')) ?? '', /Model fraud 1\.0\.0.*alert fires above PSI 0\.2/);
    assert.deepEqual(await violations(page), []);

    await page.goto(`${host.url}/console#/serving`);
    await page.waitForSelector('main h1:text-is("Serving")');
    assert.match((await page.locator('#Models-h + table').textContent()) ?? '', /fraud\s*1\.0\.0\s*none/);
    assert.match((await page.locator('#Rulesets-h + table').textContent()) ?? '', /fraud-rules\s*1\.0\.0\s*none/);
    assert.deepEqual(await violations(page), []);
  });

  it('take next keeps to the visible filters: none when none matches, else a matching case', async () => {
    await page.goto(`${host.url}/console#/queue?merchantId=m-nobody`);
    await page.waitForSelector('main h1:text-is("Queue")');
    await page.waitForSelector('#empty');
    await page.getByRole('button', { name: 'Take next' }).click();
    await page.waitForFunction(
      `document.querySelector('#status')?.textContent?.includes('No open case matches the filters.')`,
    );
    assert.equal(await heading(), 'Queue', 'no case was taken');
    await page.goto(`${host.url}/console#/queue?rule=large-amount-new-device&queue=general`);
    await page.waitForSelector('main h1:text-is("Queue")');
    // the address changes only its hash: the heading is already there, so wait (bounded) for the filters it shows
    await page.waitForFunction(`document.querySelector('#f-queue')?.value === 'general'`, undefined, {
      timeout: 20_000,
    });
    assert.equal(await page.getByLabel('Queue', { exact: true }).inputValue(), 'general');
    await page.getByRole('button', { name: 'Take next' }).click();
    await page.waitForSelector('main h1:text-matches("^Case \\\\d+$")');
    assert.deepEqual(await violations(page), []);
    // "My cases": the cases assigned to the caller
    await page.goto(`${host.url}/console#/queue`);
    await page.waitForSelector('main h1:text-is("Queue")');
    await page.getByRole('link', { name: 'My cases' }).click();
    await page.waitForFunction(`document.querySelector('#f-assignee')?.value === 'me'`);
    // the filter is shown before its list has loaded: wait (bounded, named) for the rows of the filtered list
    const mine = `(() => { const cells = [...document.querySelectorAll('tbody tr td:last-child')];
      return cells.length >= 2 && cells.every((c) => c.textContent === 'dev-analyst'); })()`;
    await page.waitForFunction(mine, undefined, { timeout: 20_000 }).catch(async () => {
      const seen = await page.locator('tbody tr td:last-child').allTextContents();
      assert.fail(`"My cases" did not list only the caller's cases within 20 s: ${seen.join(', ')}`);
    });
    const assignees = await page.locator('tbody tr td:last-child').allTextContents();
    assert.ok(assignees.length >= 2, 'the case taken after the verdict, and this one');
    assert.ok(
      assignees.every((a) => a === 'dev-analyst'),
      assignees.join(', '),
    );
    assert.deepEqual(await violations(page), []);
  });

  it('the navigation works from the keyboard: Tab to "Rules" and Enter opens it', async () => {
    await page.goto(`${host.url}/console#/queue`);
    await page.waitForSelector('main h1:text-is("Queue")');
    await page.locator('a[href="#/queue"]').focus();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate("document.activeElement?.getAttribute('href')"), '#/rules');
    await page.keyboard.press('Enter');
    await page.waitForSelector('main h1:text-is("Rules")');
  });
});
