/**
 * The browser the console tests drive: Debian's Chromium (`.ci/run` installs the `chromium` package when it is
 * missing) through playwright-core, headless, and axe-core's WCAG 2 A/AA check of a page.
 */
import { existsSync, readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium, or `CHROMIUM_PATH`. */
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** Flags for a closed network and a root user (the machine's notes: without them Chromium keeps calling out). */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Bound of every wait on a page, ms. */
export const PAGE_MS = 15_000;

/** The `skip` option of a browser suite: a reason when there is no browser. */
export function skipWithoutBrowser(): false | string {
  return existsSync(CHROMIUM) ? false : `no browser at ${CHROMIUM}`;
}

/** Chromium, headless. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/**
 * A new page in its own context, sending `headers` with every request (an identity, say). The console's CSP
 * allows no inline script: axe-core is injected past it, as a browser extension would be.
 */
export async function newPage(browser: Browser, headers: Record<string, string> = {}): Promise<Page> {
  const page = await (await browser.newContext({ bypassCSP: true, extraHTTPHeaders: headers })).newPage();
  page.setDefaultTimeout(PAGE_MS);
  return page;
}

/** axe-core's WCAG 2 A and AA violations on the page as it is now (rule id and the elements it names). */
export async function violations(page: Page): Promise<string[]> {
  const source = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.addScriptTag({ content: source });
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(o: unknown): Promise<{ violations: { id: string; nodes: { target: unknown }[] }[] }> };
      }
    ).axe;
    const r = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(' ')}`);
  });
}
