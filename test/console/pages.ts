/** What the console page tests share: identities, the window size, screenshots, and page helpers. */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { encodePrincipal } from '../../lib/identity/principal';
import { validEvent } from '../support/events';

export const ANALYST = { 'x-ms-client-principal': encodePrincipal('ana', ['analyst']) };
export const LEAD = { 'x-ms-client-principal': encodePrincipal('lee', ['lead']) };
/** Two leads, so that one can approve what the other wrote (four eyes). */
export const LEAD_A = { 'x-ms-client-principal': encodePrincipal('lead-a', ['lead']) };
export const LEAD_B = { 'x-ms-client-principal': encodePrincipal('lead-b', ['lead']) };
export const WIDE = { width: 1366, height: 900 };
/** The window of the screenshots in docs/ (a common laptop screen). */
export const SCREEN = { width: 1366, height: 768 };

/** Where the screenshots go: `CONSOLE_SCREENSHOTS`, or a new temporary folder (the tests name it in their output). */
export const SHOTS = process.env['CONSOLE_SCREENSHOTS'] ?? mkdtempSync(path.join(tmpdir(), 'console-screenshots-'));
mkdirSync(SHOTS, { recursive: true });

/** A payment the shipped ruleset reviews (1000 or more from a new device). */
export function reviewed(tx: string): Record<string, unknown> {
  return validEvent({ transactionId: tx, userId: `user-${tx}`, amount: 2500, deviceId: `dev-new-${tx}` });
}

/** The rule a draft adds in the rule-change tests: it blocks merchant `m-bad`. */
export const BLOCK_MERCHANT = {
  id: 'block-merchant',
  description: 'Payments to merchant m-bad.',
  when: 'event.merchantId == "m-bad"',
  action: 'block',
};

/** A small payment the shipped ruleset approves, to `merchantId`. */
export function small(tx: string, merchantId = 'm-bad'): Record<string, unknown> {
  return validEvent({ transactionId: tx, userId: `user-${tx}`, amount: 20, merchantId });
}

/** Opens `hash` (reloads it when it is open already) and waits for the page's heading to be `title`. */
export async function open(page: Page, base: string, hash: string, title: string | RegExp): Promise<void> {
  const url = `${base}/console${hash}`;
  if (page.url() === url) await page.reload();
  else await page.goto(url);
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** The page's width beyond the window (0: nothing overflows sideways). */
export function overflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
}
