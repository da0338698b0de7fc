/**
 * Every page of the console's navigation in Chromium (playwright-core) against `npm start` on its embedded defaults,
 * with synthetic data seeded through the API: cases in three queues (one closed, one assigned), labels, a rule
 * change promoted and one submitted with its backtest, a list with entries, and a webhook endpoint with a dead
 * delivery (its one failed attempt is dead-lettered in the stopped host's database, as the relay does after a day
 * of failures); the drift page is given a week of made-up PSI values, the seeded decisions being all in one hour.
 * Each page, as a lead at 1,366 × 768 (the queue and a case also as an analyst), passes axe-core's WCAG 2 A/AA checks and has no
 * sideways scroll. With `UPDATE_SCREENSHOTS=1` (`npm run docs:screenshots`) each page's window is written to
 * `docs/images/console-<page>.png`, which docs/console.md shows; without it, the test checks that every image
 * docs/console.md names exists and that every page of the navigation has one.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { PgliteClient } from '../../lib/platform/sql/pglite-client';
import { encodePrincipal } from '../../lib/identity/principal';
import { WebhookOutbox } from '../../lib/webhooks/webhook-outbox';
import { launchBrowser, newPage, skipWithoutBrowser, violations } from '../support/browser';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';
import { ANALYST, LEAD, SCREEN, call, open, overflow } from './pages';

const ROOT = path.resolve(__dirname, '../../..');
const IMAGES = path.join(ROOT, 'docs/images');
const UPDATE = process.env['UPDATE_SCREENSHOTS'] === '1';
/** Largest image kept in docs/, bytes. */
const MAX_PNG = 250_000;
const LEAD_B = { 'x-ms-client-principal': encodePrincipal('kim', ['lead']) };
const HOOK = 'https://merchant.example.com/hooks/fraud';

/** A page of the navigation (`nav`, its link's fragment) or a page reached from one, and its image's name. */
interface Shot {
  readonly name: string;
  readonly hash: string;
  readonly title: string | RegExp;
  readonly nav?: string;
  readonly analyst?: boolean;
  /** A heading scrolled to the window's top before the screenshot (the top of the page otherwise). */
  readonly scroll?: string;
  /** Gives the page an answer before it opens (then the page's own requests are restored). */
  readonly given?: (page: Page, api: string) => Promise<void>;
}

/**
 * A week of drift, one point a day, as a busy service would answer: the features and the model of the live answer
 * (the seeded decisions are all in one hour, one point, which draws no line), with made-up PSI values.
 */
async function driftWeek(page: Page, api: string): Promise<void> {
  const live = (await call(`${api}/insights/drift?days=7`, { headers: LEAD })).body;
  const features = live['features'] as string[];
  const day = (d: number): string => new Date(Date.UTC(2026, 10, 29 + d)).toISOString();
  const psi = (i: number, d: number): number => Math.round(((0.004 * (i + 1) * (d + 1)) % 0.12) * 1000) / 1000;
  const points = Array.from({ length: 7 }, (_, d) => ({
    start: day(d),
    samples: 4200 + 150 * d,
    score: 0.02 + 0.015 * d,
    features: Object.fromEntries(features.map((f, i) => [f, f === 'velocity_1m' ? 0.04 * d : psi(i, d)])),
  }));
  const answer = { ...live, from: day(0), to: day(7), bucket: 'day', features, points, truncated: false };
  await page.route('**/api/insights/drift**', (r) => r.fulfill({ json: answer }));
}

/** A payment of user `n` (synthetic: example.com emails, addresses of the documentation ranges). */
function payment(tx: string, n: number, amount: number, more: Record<string, unknown> = {}): Record<string, unknown> {
  return validEvent({
    transactionId: tx,
    userId: `u-${1000 + n}`,
    email: `customer${n}@example.com`,
    ipAddress: `198.51.100.${n}`,
    deviceId: `dev-${1000 + n}`,
    merchantId: ['m-grocer', 'm-books', 'm-travel'][n % 3],
    merchantCategory: ['5411', '5942', '4722'][n % 3],
    amount,
    timestamp: new Date().toISOString(),
    ...more,
  });
}

async function post(url: string, body: unknown, headers: Record<string, string> = LEAD): Promise<unknown> {
  const r = await call(url, { method: 'POST', body, headers });
  assert.ok(r.status < 300, `POST ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

type CaseRow = { id: string; queue?: string; transactionId: string };
const openCases = async (api: string): Promise<CaseRow[]> =>
  (await call(`${api}/cases?status=open`, { headers: LEAD })).body['cases'] as CaseRow[];

/** The first part of the data: the endpoint, the traffic and the reviews (before the host is stopped). */
async function seedTraffic(api: string): Promise<void> {
  await post(`${api}/webhooks`, { url: HOOK, events: ['review.opened', 'review.closed'] });
  // 110 users with one small payment each (the drift page's 100 scored payments in one hour), then one user's
  // burst within a minute (the model holds the fifth: the general queue)
  for (let n = 1; n <= 110; n++) await post(`${api}/score`, payment(`tx-${n}`, n, 12.5 + ((n * 37) % 180)));
  for (let i = 0; i < 5; i++) await post(`${api}/score`, payment(`tx-b-${i}`, 120, 20 + i * 13));
  await post(`${api}/score`, payment('tx-hv-1', 121, 7200, { deviceId: 'dev-new-121' }));
  await post(`${api}/score`, payment('tx-nd-1', 122, 2500, { deviceId: 'dev-new-122' }));
  await post(`${api}/score`, payment('tx-nd-3', 124, 1800, { deviceId: 'dev-new-124' }));
  await post(`${api}/score`, payment('tx-nd-4', 125, 3100, { deviceId: 'dev-new-125', channel: 'app' }));
  await post(`${api}/score`, payment('tx-nd-2', 123, 1400, { deviceId: 'dev-new-123', channel: 'app' }));
  await eventually(
    async () => (await openCases(api)).map((c) => ({ queue: c.queue, transactionId: c.transactionId })),
    (cs) => ['general', 'high-value', 'new-device'].every((q) => cs.some((c) => c.queue === q)),
    'open cases in the general, high-value and new-device queues',
  );
}

/** The rest: a closed case, an assigned one, labels, a draft with its backtest, list entries. */
async function seedWork(api: string): Promise<void> {
  const cases = await openCases(api);
  const closing = cases.find((c) => c.transactionId === 'tx-nd-2');
  assert.ok(closing !== undefined, 'the case of tx-nd-2');
  await post(`${api}/cases/${closing.id}/verdict`, { verdict: 'fraud', reason: 'Card reported stolen by the bank.' });
  await post(`${api}/cases/next?queue=general`, {}, ANALYST);
  const reportedAt = new Date().toISOString();
  const label = (transactionId: string, l: string): unknown => ({ transactionId, label: l, reportedAt });
  const labels = [label('tx-b-4', 'fraud'), label('tx-hv-1', 'legit'), label('tx-nd-1', 'fraud')];
  for (let n = 1; n <= 6; n++) labels.push(label(`tx-${n}`, n === 3 ? 'chargeback' : 'legit'));
  await post(`${api}/labels`, { labels });
  // 1.1.0 adds a rule and serves (kim drafts, lee approves and promotes); 1.2.0 changes it and waits for approval
  const serving = (await call(`${api}/insights/ruleset`, { headers: LEAD })).body;
  const doc = serving['document'] as { rules: unknown[] };
  const travel = (min: number): unknown => ({
    id: 'travel-large-amount',
    description: `A travel payment of ${min} or more.`,
    when: `event.merchantCategory == "4722" && event.amount >= ${min}.0`,
    action: 'review',
  });
  await draft(api, { ...doc, version: '1.1.0', rules: [...doc.rules, travel(150)] }, 'Travel fraud rose this week.');
  await post(`${api}/rulesets/fraud-rules/drafts/1.1.0/approve`, { comment: 'Backtest checked.' });
  await post(`${api}/rulesets/fraud-rules/drafts/1.1.0/promote`, {});
  await draft(api, { ...doc, version: '1.2.0', rules: [...doc.rules, travel(100)] }, 'Lower the travel amount.');
  const day = 86_400;
  const lists = `${api}/list-entries/blocked_users`;
  await post(lists, { values: ['u-2001', 'u-2002'], reason: 'Chargebacks confirmed by the issuer.' });
  await post(lists, { values: ['u-2003'], ttlSeconds: 30 * day, reason: 'Account takeover, under review.' });
}

/** Drafts `doc` as kim, runs its backtest over the last hour and submits it. */
async function draft(api: string, doc: { version: string; rules: unknown[] }, comment: string): Promise<void> {
  const at = `${api}/rulesets/fraud-rules/drafts`;
  await post(at, doc, LEAD_B);
  const window = {
    from: new Date(Date.now() - 3_600_000).toISOString(),
    to: new Date(Date.now() + 60_000).toISOString(),
  };
  await post(`${at}/${doc.version}/backtest`, window, LEAD_B);
  await eventually(
    async () => (await call(`${at}/${doc.version}/backtest`, { headers: LEAD_B })).body['state'],
    (s) => s === 'done',
    `the backtest of draft ${doc.version} done`,
    120_000,
  );
  await post(`${at}/${doc.version}/submit`, { comment }, LEAD_B);
}

/** Dead-letters the oldest delivery once it has failed (the endpoint does not resolve on this closed network). */
async function deadLetter(host: LocalHost, dir: string): Promise<void> {
  type Delivery = { id: string; attempts: number; lastError?: string; lastStatus?: number };
  const pending = await eventually(
    async () =>
      (await call(`${host.url}/webhooks/deliveries?state=pending`, { headers: LEAD })).body['deliveries'] as Delivery[],
    (ds) => ds.some((d) => d.attempts >= 1),
    'a failed webhook delivery',
    60_000,
  );
  const failed = pending.filter((d) => d.attempts >= 1).at(-1) as Delivery;
  await stopChild(host.child, 'npm start to exit after SIGTERM');
  const db = await PgliteClient.create(path.join(dir, 'pglite'));
  try {
    const n = await new WebhookOutbox(db).dead(failed.id, Date.now(), failed.lastError ?? 'failed', failed.lastStatus);
    assert.ok(n >= 1, 'dead-lettered');
  } finally {
    await db.dispose();
  }
}

const SHOTS: readonly Shot[] = [
  { name: 'queue', nav: 'Queue', hash: '#/queue', title: 'Queue' },
  { name: 'case', hash: '#/case/{hv}', title: /^Case \d+$/ },
  { name: 'rules', nav: 'Rules', hash: '#/rules', title: 'Rules' },
  { name: 'drift', nav: 'Drift', hash: '#/drift?days=7', title: 'Drift', given: driftWeek },
  { name: 'serving', nav: 'Serving', hash: '#/serving', title: 'Serving' },
  { name: 'drafts', nav: 'Rule changes', hash: '#/drafts', title: 'Rule changes' },
  { name: 'draft', hash: '#/draft/1.2.0', title: 'Draft 1.2.0' },
  { name: 'lists', nav: 'Lists', hash: '#/lists', title: 'Lists' },
  { name: 'audit', nav: 'Audit', hash: '#/audit', title: 'Audit' },
  { name: 'webhooks', nav: 'Webhooks', hash: '#/webhooks', title: 'Webhooks', scroll: 'Endpoints' },
  { name: 'queue-analyst', hash: '#/queue', title: 'Queue', analyst: true },
  { name: 'case-analyst', hash: '#/case/{nd}', title: /^Case \d+$/, analyst: true },
];

describe('every console page in Chromium at 1,366 px, for the docs', { skip: skipWithoutBrowser() }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-console-shots-'));
  const settings = { CASE_QUEUES_FILE: path.join(ROOT, 'examples/queues.json') };
  let host: LocalHost | undefined;
  let browser: Browser;
  let lead: Page;
  let analyst: Page;
  const ids: Record<string, string> = {};

  before(async () => {
    const first = await startCaseHost(dir, settings);
    host = first;
    await seedTraffic(first.url);
    const cases = await openCases(first.url);
    ids['hv'] = cases.find((c) => c.transactionId === 'tx-hv-1')?.id ?? '';
    ids['nd'] = cases.find((c) => c.transactionId === 'tx-nd-1')?.id ?? '';
    await deadLetter(first, dir);
    host = await startCaseHost(dir, settings);
    await seedWork(host.url);
    browser = await launchBrowser();
    lead = await newPage(browser, LEAD);
    analyst = await newPage(browser, ANALYST);
    await lead.setViewportSize(SCREEN);
    await analyst.setViewportSize(SCREEN);
  });
  after(async () => {
    await browser?.close();
    if (host !== undefined) await stopChild(host.child, 'npm start to exit after SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  for (const s of SHOTS)
    it(`${s.name}: loads, passes axe, fits 1,366 px${UPDATE ? `, docs/images/console-${s.name}.png` : ''}`, async () => {
      const page = s.analyst === true ? analyst : lead;
      const hash = s.hash.replace(/\{(\w+)\}/, (_, k: string) => ids[k] ?? '');
      await s.given?.(page, (host as LocalHost).url);
      await open(page, (host as LocalHost).url, hash, s.title);
      const main = (await page.locator('main').textContent()) ?? '';
      assert.doesNotMatch(main, /Loading…|The service failed|Not found|Not allowed/, `${s.name} shows its data`);
      assert.equal(await overflow(page), 0, `${s.name} fits 1,366 px`);
      assert.deepEqual(await violations(page), [], `${s.name}: axe`);
      if (UPDATE) {
        const file = path.join(IMAGES, `console-${s.name}.png`);
        if (s.scroll === undefined) await page.evaluate('window.scrollTo(0, 0)');
        else await page.getByRole('heading', { name: s.scroll, exact: true }).evaluate((el) => el.scrollIntoView());
        await page.screenshot({ path: file, fullPage: false, animations: 'disabled', caret: 'hide' });
        assert.ok(statSync(file).size < MAX_PNG, `${file}: ${statSync(file).size} bytes, at most ${MAX_PNG}`);
      }
      await page.unrouteAll();
    });
});

describe("the console's screenshots in docs/console.md", () => {
  const doc = readFileSync(path.join(ROOT, 'docs/console.md'), 'utf8');
  const named = [...doc.matchAll(/!\[([^\]]*)\]\((images\/[^)]+\.png)\)/g)];

  it('every image docs/console.md shows exists, is under 250 KB and has an alt text', () => {
    assert.ok(named.length > 0, 'docs/console.md shows screenshots');
    for (const [, alt, file] of named) {
      const at = path.join(ROOT, 'docs', file ?? '');
      assert.ok(existsSync(at), `${file} exists (npm run docs:screenshots writes it)`);
      assert.ok(statSync(at).size < MAX_PNG, `${file} under ${MAX_PNG} bytes`);
      assert.ok((alt ?? '').length > 10, `${file} has a meaningful alt text`);
    }
  });

  it("every page of the console's navigation has its screenshot in docs/console.md", () => {
    const html = readFileSync(path.join(ROOT, 'console/index.html'), 'utf8');
    const nav = [...html.matchAll(/<a href="#\/(\w+)"[^>]*>([^<]+)<\/a>/g)].map((m) => m[2]);
    assert.ok(nav.length >= 8, `the navigation's links: ${nav.join(', ')}`);
    const shown = new Set(named.map((m) => m[2]));
    for (const label of nav) {
      const s = SHOTS.find((x) => x.nav === label);
      assert.ok(s !== undefined, `the test takes a screenshot of the ${label} page`);
      assert.ok(shown.has(`images/console-${s.name}.png`), `docs/console.md shows images/console-${s.name}.png`);
    }
  });
});
