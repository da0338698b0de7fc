/**
 * The case page as analysts work it, in Chromium under `npm start` (PGlite, identities from the request header):
 * the queue → a case opened with the keyboard → its payment's fields in their fixed labelled order, the reasons in
 * plain words with their bars, the user's recent held payments, the user's recent payments as decided (and why
 * there are none) and the history in words → `f`, the confirm dialog, Enter → the verdict goes after the undo
 * window → the next case; Undo (and Escape) in the window keeps the case open, with the page's clock driven by the
 * test; a lead's case assigned to someone else warns before it closes, and the list to add the user to is picked
 * from the lists the active ruleset declares. By role and label, axe on each page, a screenshot of each in
 * `CONSOLE_SCREENSHOTS` (or the folder the output names).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage, skipWithoutBrowser, violations } from '../support/browser';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';
import { ANALYST, LEAD, SHOTS, WIDE, shot } from './pages';
import { http } from '../support/http';

interface CaseRow {
  id: string;
  transactionId: string;
  state: string;
  verdict?: string;
  closedBy?: string;
}

/** A payment the shipped ruleset reviews (1000 or more from a new device), for `user`. */
function held(tx: string, user: string): Record<string, unknown> {
  return validEvent({ transactionId: tx, userId: user, amount: 2500, deviceId: `dev-new-${tx}` });
}

describe('the case page, from the keyboard, in Chromium under npm start', { skip: skipWithoutBrowser() }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-case-page-'));
  let host: LocalHost;
  let browser: Browser;
  const ids = new Map<string, string>();

  const caseOf = async (id: string): Promise<CaseRow> =>
    (await http().get(`${host.url}/cases/${id}`, { headers: ANALYST })).json['case'] as CaseRow;
  const heading = (page: Page): Promise<string | null> => page.textContent('main h1');
  /** The element that has the focus: its id, or its text. */
  const focused = (page: Page): Promise<string> =>
    page.evaluate<string>('document.activeElement?.id || document.activeElement?.textContent || ""');

  before(async () => {
    host = await startCaseHost(dir);
    // two payments of one user (a case then lists the other), then one each for three others, in this order
    const payments = [
      held('tx-cp-1', 'u-cp-a'),
      held('tx-cp-2', 'u-cp-a'),
      held('tx-cp-3', 'u-cp-b'),
      held('tx-cp-4', 'u-cp-c'),
      held('tx-cp-5', 'u-cp-d'),
    ];
    for (const p of payments) {
      const r = await http().post(`${host.url}/score`, p);
      assert.equal(r.json['decision'], 'review', String(p['transactionId']));
    }
    const open = await eventually(
      async () => (await http().get(`${host.url}/cases?status=open&order=oldest`)).json['cases'] as CaseRow[],
      (cs) => cs.length === payments.length,
      'five open cases',
    );
    for (const c of open) ids.set(c.transactionId, c.id);
    browser = await launchBrowser();
    console.log(`screenshots in ${SHOTS}`);
  });
  after(async () => {
    await browser?.close();
    if (host !== undefined) await stopChild(host.child, 'npm start to exit after SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('queue → a case opened from the keyboard → its fields, reasons, held payments and history in words', async () => {
    const page = await newPage(browser, ANALYST);
    await page.setViewportSize(WIDE);
    await page.goto(`${host.url}/console#/queue`);
    await page.getByRole('heading', { level: 1, name: 'Queue' }).waitFor();
    const first = `Case ${ids.get('tx-cp-1')}`;
    // Tab from the page's heading to the oldest case's link, then Enter (bounded: the queue has fewer controls)
    for (let i = 0; i < 40 && (await focused(page)) !== first; i++) await page.keyboard.press('Tab');
    assert.equal(await focused(page), first, 'Tab reaches the first case');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: first }).waitFor();

    const payment = page.getByRole('region', { name: 'Payment', exact: true });
    const labels = await payment.locator('dt').allTextContents();
    assert.deepEqual(labels, [
      'Transaction id',
      'Amount',
      'Merchant',
      'Merchant category',
      'Channel',
      'Paid at',
      'Card country',
      'User id',
      'Email',
      'Session id',
      'Device id',
      'IP address',
      'IP address country',
      'Card fingerprint',
    ]);
    const values = await payment.locator('dd').allTextContents();
    assert.deepEqual(values.slice(0, 5), ['tx-cp-1', '2,500.00 EUR', 'm-991', '5411 (grocery stores)', 'Web']);
    assert.match(values[6] ?? '', /^France \(FR\)$/);
    assert.ok(!labels.some((l) => /^[a-z]+[A-Z]/.test(l)), `no camelCase key: ${labels.join(', ')}`);

    const reasons = page.getByRole('list', { name: "The model's top reasons, strongest first" });
    const items = await reasons.getByRole('listitem').allInnerTexts();
    assert.ok(items.length > 0, 'the reasons');
    for (const item of items) {
      assert.match(item, /odds of fraud × \d/, item);
      assert.doesNotMatch(item, /ln\(|log-odds|_/, `no formula, log-odds or code: ${item}`);
    }
    assert.equal(await reasons.locator('.bar-fill').count(), items.length, 'a bar per reason');
    // the formulas stay one click away
    await page.getByText('How the model measured it').click();
    assert.match((await page.locator('details.formulas').innerText()) ?? '', /log-odds/);

    const others = page.getByRole('table', { name: "The user's recent held payments" });
    const row = await others.getByRole('row').nth(1).getByRole('cell').allTextContents();
    assert.deepEqual(row.slice(2), ['2,500.00 EUR', 'm-991', row[4] ?? '', 'review', 'Waiting for review']);
    assert.equal(row[0], `Case ${ids.get('tx-cp-2')}`);

    // the user's recent payments as decided, newest first, this case's own marked
    const recent = page.getByRole('table', { name: 'Recent payments of this user' });
    assert.deepEqual(await recent.getByRole('columnheader').allTextContents(), [
      'Payment',
      'Decided',
      'Amount',
      'Merchant',
      'Decision',
      'Score',
      'Rules fired',
    ]);
    const newest = await recent.getByRole('row').nth(1).getByRole('cell').allTextContents();
    assert.deepEqual(
      [newest[0], newest[2], newest[3], newest[4], newest[6]],
      ['tx-cp-2', '2,500.00 EUR', 'm-991', 'Held for review', 'large-amount-new-device'],
    );
    assert.match(newest[1] ?? '', /\d{1,2}:\d{2}.*\b([A-Z]{2,5}|GMT[+-]\d+)$/, `a time with its zone: ${newest[1]}`);
    assert.equal(
      (await recent.getByRole('row').nth(2).getByRole('cell').first().textContent()) ?? '',
      'tx-cp-1 (this case)',
    );
    assert.match((await page.locator('#case-history').innerText()) ?? '', /The payment was held for review/);
    assert.deepEqual(await violations(page), []);
    await shot(page, 'case-page');

    // a user with no other payment: the section says why the table is not there
    await page.goto(`${host.url}/console#/case/${ids.get('tx-cp-3')}`);
    const section = page.getByRole('region', { name: 'Recent payments' });
    await section.waitFor();
    assert.equal(
      await section.locator('#recent-none').textContent(),
      'No other payments by this user in the last 30 days.',
    );
    assert.equal(await page.getByRole('table', { name: 'Recent payments of this user' }).count(), 0);
    await page.context().close();
  });

  it('the second opinion reads in words, in a fixed order (an escalated case, from a given answer)', async () => {
    const page = await newPage(browser, ANALYST);
    const id = ids.get('tx-cp-5') ?? '';
    await page.route(`**/api/cases/${id}`, async (route) => {
      const res = await route.fetch();
      const body = (await res.json()) as { case: Record<string, unknown> };
      body.case['escalation'] = {
        model: 'gpt-4o-mini',
        outcome: 'ok',
        latencyMs: 840,
        tokens: { prompt: 900, completion: 60 },
        costUsd: 0.0004,
        triggers: ['band'],
        localDecision: 'review',
        llm: { riskLevel: 'high', score: 0.91, reasons: ['Large amount on a new device'], decision: 'decline' },
      };
      await route.fulfill({ response: res, json: body });
    });
    await page.goto(`${host.url}/console#/case/${id}`);
    await page.getByRole('heading', { level: 1, name: `Case ${id}` }).waitFor();
    const opinion = page.locator('#second-opinion');
    assert.deepEqual(await opinion.locator('dt').allTextContents(), [
      'Outcome',
      'Why it was asked',
      "The LLM's risk level",
      "The LLM's score",
      "The LLM's reasons",
      "The LLM's decision",
      'The local decision',
      'Model',
      'Time taken',
      'Tokens',
      'Estimated cost',
    ]);
    const values = await opinion.locator('dd').allTextContents();
    assert.equal(values[0], 'Answered');
    assert.equal(values[1], 'score near the thresholds');
    assert.equal(values[4], 'Large amount on a new device');
    assert.doesNotMatch(values.join(' '), /[{}]/, 'no raw JSON');
    assert.deepEqual(await violations(page), []);
    await page.context().close();
  });

  it('f → the confirm dialog → Enter → the verdict goes after the undo window → the next case', async () => {
    const page = await newPage(browser, ANALYST);
    await page.goto(`${host.url}/console#/case/${ids.get('tx-cp-1')}`);
    await page.getByRole('heading', { level: 1, name: `Case ${ids.get('tx-cp-1')}` }).waitFor();
    await page.evaluate("localStorage.setItem('console.verdictUndoMs', '300')");
    await page.locator('main').focus();
    await page.keyboard.press('f');
    const dialog = page.getByRole('dialog', { name: `Close case ${ids.get('tx-cp-1')} as fraud?` });
    await dialog.waitFor();
    assert.match((await dialog.innerText()) ?? '', /Transaction tx-cp-1 is labelled fraud\./);
    assert.equal(await focused(page), 'confirm-verdict', 'the confirm button has the focus');
    assert.deepEqual(await violations(page), []);
    await shot(page, 'case-verdict-confirm');
    await page.keyboard.press('Enter');
    await page.waitForFunction(`document.querySelector('main h1')?.textContent !== 'Case ${ids.get('tx-cp-1')}'`);
    assert.match((await page.textContent('#status')) ?? '', new RegExp(`Case ${ids.get('tx-cp-1')} closed as fraud`));
    assert.match((await heading(page)) ?? '', /^Case \d+$/, 'the next case is open');
    const closed = await caseOf(ids.get('tx-cp-1') ?? '');
    assert.equal(closed.state, 'closed');
    assert.equal(closed.verdict, 'fraud');
    await page.context().close();
  });

  it('Undo (Enter on it) in the window keeps the case open; the focus goes back to the verdict', async () => {
    const page = await newPage(browser, ANALYST);
    const id = ids.get('tx-cp-3') ?? '';
    await page.goto(`${host.url}/console#/case/${id}`);
    await page.getByRole('heading', { level: 1, name: `Case ${id}` }).waitFor();
    // a long window, so that the page can be checked and photographed in it
    await page.evaluate("localStorage.setItem('console.verdictUndoMs', '60000')");
    await page.locator('main').focus();
    await page.keyboard.press('l');
    await page.getByRole('dialog', { name: `Close case ${id} as legitimate?` }).waitFor();
    await page.keyboard.press('Enter');
    await page.getByText(`Case ${id} closes as legitimate in 60 s.`, { exact: true }).waitFor();
    assert.equal(await focused(page), 'verdict-undo', 'Undo has the focus');
    assert.deepEqual(await violations(page), []);
    await shot(page, 'case-verdict-undo');
    await page.keyboard.press('Enter');
    await page.waitForFunction(`document.querySelector('#status')?.textContent === 'Undone: case ${id} stays open.'`);
    assert.equal(await focused(page), 'verdict-legit', 'the focus is back on the verdict');
    assert.equal(await page.locator('#verdict-pending').isHidden(), true);
    assert.notEqual((await caseOf(id)).state, 'closed');
    await page.context().close();
  });

  it('with the page clock driven by the test: Escape undoes; without it the verdict goes after 5 s', async () => {
    const page = await newPage(browser, ANALYST);
    await page.clock.install();
    const id = ids.get('tx-cp-3') ?? '';
    await page.goto(`${host.url}/console#/case/${id}`);
    await page.getByRole('heading', { level: 1, name: `Case ${id}` }).waitFor();
    // from here the page's timers run only when the test moves its clock (so no axe here: it needs timers)
    await page.clock.pauseAt(Date.now() + 1_000);
    await page.locator('main').focus();
    await page.keyboard.press('f');
    await page.getByRole('dialog', { name: `Close case ${id} as fraud?` }).waitFor();
    await page.keyboard.press('Enter');
    await page.getByText(`Case ${id} closes as fraud in 5 s.`, { exact: true }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByText(`Undone: case ${id} stays open.`, { exact: true }).waitFor();
    await page.clock.runFor(10_000);
    assert.notEqual((await caseOf(id)).state, 'closed', 'undone by Escape: nothing was sent');

    await page.keyboard.press('l');
    await page.getByRole('dialog', { name: `Close case ${id} as legitimate?` }).waitFor();
    await page.keyboard.press('Enter');
    await page.getByText(`Case ${id} closes as legitimate in 5 s.`, { exact: true }).waitFor();
    await page.clock.runFor(4_000);
    await page.getByText(`Case ${id} closes as legitimate in 1 s.`, { exact: true }).waitFor();
    assert.notEqual((await caseOf(id)).state, 'closed', 'not before the window ends');
    await page.clock.runFor(1_000);
    await page.getByText(new RegExp(`^Case ${id} closed as legitimate\\.`)).waitFor();
    const closed = await caseOf(id);
    assert.equal(closed.state, 'closed');
    assert.equal(closed.verdict, 'legit');
    await page.context().close();
  });

  it("a lead is warned before closing someone else's case, and picks the list from the declared ones", async () => {
    const id = ids.get('tx-cp-4') ?? '';
    const assigned = await http().post(`${host.url}/cases/${id}/assign`, { assignee: 'bob' }, { headers: LEAD });
    assert.equal(assigned.status, 200);
    const page = await newPage(browser, LEAD);
    await page.setViewportSize(WIDE);
    await page.goto(`${host.url}/console#/case/${id}`);
    await page.getByRole('heading', { level: 1, name: `Case ${id}` }).waitFor();
    await page.evaluate("localStorage.setItem('console.verdictUndoMs', '300')");
    assert.match((await page.locator('#verdict-assignee').textContent()) ?? '', /^Assigned to bob, not to you/);

    const pick = page.getByLabel('Add to a list (optional)');
    const options = await pick.locator('option').allTextContents();
    assert.deepEqual(options, ['No list', 'blocked_users: the user id u-cp-c']);
    await pick.focus();
    await pick.selectOption('blocked_users');
    assert.deepEqual(await violations(page), []);

    // Escape in the dialog: nothing is closed
    await page.locator('main').focus();
    await page.keyboard.press('f');
    const dialog = page.getByRole('dialog', { name: `Close case ${id} as fraud?` });
    await dialog.waitFor();
    const said = (await dialog.innerText()) ?? '';
    assert.match(said, /This case is assigned to bob, not to you\./);
    assert.match(said, /The user id u-cp-c is added to the list blocked_users\./);
    await page.getByRole('button', { name: "Close bob's case as fraud" }).waitFor();
    assert.deepEqual(await violations(page), []);
    await shot(page, 'case-verdict-assigned-elsewhere');
    await page.keyboard.press('Escape');
    await page.waitForFunction(
      `document.querySelector('#status')?.textContent === 'Not closed: case ${id} stays open.'`,
    );
    assert.equal((await caseOf(id)).state, 'assigned');

    await page.keyboard.press('f');
    await dialog.waitFor();
    await page.keyboard.press('Enter');
    await page.waitForFunction(`document.querySelector('main h1')?.textContent !== 'Case ${id}'`);
    const closed = await caseOf(id);
    assert.equal(closed.verdict, 'fraud');
    assert.equal(closed.closedBy, 'lee');
    await eventually(
      async () => (await http().get(`${host.url}/lists/blocked_users`, { headers: LEAD })).json,
      (b) => JSON.stringify(b).includes('u-cp-c'),
      'the user on blocked_users (the outbox relay delivers it)',
    );
    await page.context().close();
  });
});
