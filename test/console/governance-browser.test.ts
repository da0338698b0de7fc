/**
 * A rule change from draft to serving, in a real browser (Chromium through playwright-core) against `npm start`
 * on its embedded defaults (PGlite, the development identity, which honours Easy Auth's `x-ms-client-principal`
 * header so that two leads can act): lead A writes a draft that blocks a merchant (a draft that does not compile
 * is shown against its rule first), runs its backtest on the logged payments and their labels, whose answer is
 * known, and submits it; A's own approval is refused; lead B approves; promote serves it; the audit page lists
 * both actors. Each page passes axe-core's WCAG 2 A/AA checks.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { exportDataset } from '../../lib/learning/dataset';
import { readDecisions } from '../../lib/learning/decision-reader';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import { launchBrowser, newPage, skipWithoutBrowser, violations } from '../support/browser';
import { stopChild } from '../support/child-process';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';
import { http } from '../support/http';
import { BLOCK_MERCHANT, LEAD_A, LEAD_B, small } from './pages';

describe(
  'a rule change in Chromium under npm start: draft, backtest, four eyes, serving, audit',
  { skip: skipWithoutBrowser() },
  () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'test-governance-'));
    let host: LocalHost;
    let browser: Browser;
    let a: Page;
    let b: Page;
    let serving: Record<string, unknown>;

    before(async () => {
      host = await startCaseHost(dir);
      const payments = [
        small('tx-g-1', 'm-bad'),
        small('tx-g-2', 'm-bad'),
        small('tx-g-3', 'm-bad'),
        small('tx-g-4', 'm-ok'),
      ];
      for (const p of payments) {
        const r = await http().post(`${host.url}/score`, p);
        assert.equal(r.json['decision'], 'approve', `${String(p['transactionId'])} is approved by the shipped rules`);
      }
      const reportedAt = new Date().toISOString();
      const labels = [
        { transactionId: 'tx-g-1', label: 'fraud', reportedAt },
        { transactionId: 'tx-g-2', label: 'fraud', reportedAt },
        { transactionId: 'tx-g-3', label: 'legit', reportedAt },
      ];
      assert.equal((await http().post(`${host.url}/labels`, { labels })).status, 200);
      const store = new FolderLearningStore(path.join(dir, 'decisions'));
      const day = 86_400_000;
      await eventually(
        async () => [
          (await readDecisions(store, Date.now() - day, Date.now() + day)).length,
          (await exportDataset(store, Date.now() - day, Date.now() + day)).rows.filter((r) => r.labels.length > 0)
            .length,
        ],
        ([decisions, labelled]) => decisions === 4 && labelled === 3,
        'the four decisions and three labels in the learning store',
      );
      serving = (await http().get(`${host.url}/insights/ruleset`, { headers: LEAD_A })).json;
      assert.equal(serving['version'], '1.0.0');
      browser = await launchBrowser();
      a = await newPage(browser, LEAD_A);
      b = await newPage(browser, LEAD_B);
    });
    after(async () => {
      await browser?.close();
      await stopChild(host.child, 'npm start to exit after SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    });

    const draft = (rules: unknown[]): string => {
      const doc = serving['document'] as { rules: unknown[] };
      return JSON.stringify({ ...doc, version: '1.1.0', rules: [...doc.rules, ...rules] }, null, 2);
    };

    it('lead A: a draft that does not compile is listed against its rule; the fixed one is saved', async () => {
      await a.goto(`${host.url}/console#/drafts`);
      await a.waitForSelector('main h1:text-is("Rule changes")');
      assert.ok(await a.locator('#no-drafts').isVisible(), 'no draft yet');
      assert.deepEqual(await violations(a), []);
      await a.click('#new-draft');
      await a.waitForSelector('main h1:text-is("New draft")');
      await a.fill('#draft-document', draft([{ ...BLOCK_MERCHANT, id: 'broken', when: 'event.merchantId ==' }]));
      await a.click('#save-draft');
      await a.waitForSelector('#draft-errors li');
      assert.match((await a.textContent('#draft-errors')) ?? '', /rule broken/);
      assert.equal(await a.getAttribute('#draft-document', 'aria-invalid'), 'true');
      assert.deepEqual(await violations(a), []);

      await a.fill('#draft-document', draft([BLOCK_MERCHANT]));
      await a.click('#save-draft');
      await a.waitForSelector('main h1:text-is("Draft 1.1.0")');
      assert.match((await a.textContent('#draft-state')) ?? '', /fraud-rules 1\.1\.0: draft\. Author lead-a/);
    });

    it("lead A: the draft's backtest reports the decisions it changes and the labelled payments it catches and blocks", async () => {
      await a.click('#run-backtest');
      await a.waitForSelector('#backtest-summary', { timeout: 60_000 });
      assert.match(
        (await a.textContent('#backtest-summary')) ?? '',
        /^4 decisions from .*, 3 labelled\. Labelled fraud now caught: 2\. Labelled good now blocked: 1, now held for review: 0\./,
      );
      assert.match((await a.locator('table', { hasText: 'Change' }).textContent()) ?? '', /approve.*decline\s*3/);
      assert.deepEqual(await violations(a), []);
      await a.click('#submit-draft');
      await a.waitForSelector('#draft-state:text-matches("submitted")');
    });

    it("the author's own approval is refused (403), and a promote before approval is 409 and changes nothing", async () => {
      await a.fill('#decision-comment', 'my own');
      await a.click('#approve');
      await a.waitForSelector('#status.error');
      assert.match((await a.textContent('#status')) ?? '', /author|own/i, 'the page says why');
      const mine = await http().post(
        `${host.url}/rulesets/fraud-rules/drafts/1.1.0/approve`,
        { comment: 'my own' },
        { headers: LEAD_A },
      );
      assert.equal(mine.status, 403);
      const early = await http().post(
        `${host.url}/rulesets/fraud-rules/promote`,
        { version: '1.1.0' },
        { headers: LEAD_B },
      );
      assert.equal(early.status, 409);
      const d = await http().get(`${host.url}/rulesets/fraud-rules/drafts/1.1.0`, { headers: LEAD_A });
      assert.equal(d.json['state'], 'submitted');
      const still = await http().post(`${host.url}/score`, small('tx-g-5', 'm-bad'));
      assert.equal(still.json['decision'], 'approve', 'the unapproved draft does not serve');
    });

    it('lead B approves with a comment; after promote the version serves and blocks the merchant', async () => {
      await b.goto(`${host.url}/console#/draft/1.1.0`);
      await b.waitForSelector('main h1:text-is("Draft 1.1.0")');
      assert.deepEqual(await violations(b), []);
      await b.fill('#decision-comment', 'backtest checked');
      await b.click('#approve');
      await b.waitForSelector('#draft-state:text-matches("approved")');
      assert.match((await b.textContent('#draft-state')) ?? '', /decided by lead-b/);
      const promoted = await http().post(
        `${host.url}/rulesets/fraud-rules/promote`,
        { version: '1.1.0' },
        { headers: LEAD_B },
      );
      assert.equal(promoted.status, 200, JSON.stringify(promoted.json));
      let n = 0;
      const blocked = await eventually(
        () => http().post(`${host.url}/score`, small(`tx-g-6-${n++}`, 'm-bad')),
        (r) => (r.json['ruleset'] as { version?: string } | undefined)?.version === '1.1.0',
        'a decision by ruleset 1.1.0',
      );
      assert.equal(blocked.json['decision'], 'decline');
    });

    it('the audit page lists the change with both actors', async () => {
      await b.goto(`${host.url}/console#/audit?kind=ruleset`);
      await b.waitForSelector('main h1:text-is("Audit")');
      await b.waitForSelector('tbody tr');
      const rows = await b.locator('tbody tr').allTextContents();
      assert.ok(
        rows.some((r) => /lead-a/.test(r) && /1\.1\.0/.test(r)),
        `an entry by lead-a: ${rows.join(' | ')}`,
      );
      assert.ok(
        rows.some((r) => /lead-b/.test(r) && /approve/.test(r)),
        `lead-b's approval: ${rows.join(' | ')}`,
      );
      assert.ok(
        rows.some((r) => /lead-b/.test(r) && /promote/.test(r)),
        `lead-b's promote: ${rows.join(' | ')}`,
      );
      assert.deepEqual(await violations(b), []);
    });
  },
);
