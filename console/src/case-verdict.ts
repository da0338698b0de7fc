/**
 * The case page's verdict: **Fraud** (key `f`) or **Legitimate** (key `l`) asks first (a dialog that says what the
 * verdict writes, and warns when the case is assigned to someone else), then waits out a short undo window
 * (**Undo**, or Escape) before it sends the verdict; then the queue moves on. A lead may add the case's value to one
 * of the lists the active ruleset declares, picked from them. Leaving the page in the window sends the verdict.
 */
import { call } from './api.js';
import type { ApiRoutes } from './api-contract.js';
import { h, say } from './dom.js';
import { fail, takeNext } from './queue.js';
import type { Case, CaseListOption, Me, Verdict } from './types.js';

/** The undo window, ms, unless the browser's `localStorage` sets `console.verdictUndoMs` (tests do; 0 to 60,000). */
export const UNDO_MS = 5_000;

function undoMs(): number {
  const set = Number(globalThis.localStorage?.getItem('console.verdictUndoMs') ?? NaN);
  return Number.isInteger(set) && set >= 0 && set <= 60_000 ? set : UNDO_MS;
}

const WORD: Readonly<Record<Verdict, string>> = { fraud: 'fraud', legit: 'legitimate' };
const KEY_LABEL: Readonly<Record<string, string>> = {
  userId: 'user id',
  cardFingerprint: 'card fingerprint',
  deviceId: 'device id',
  ipAddress: 'IP address',
  email: 'email',
};

/** A verdict waiting out its undo window. */
interface Pending {
  readonly caseId: string;
  readonly verdict: Verdict;
  readonly body: ApiRoutes['casesVerdict']['body'];
  readonly timers: number[];
}

let pending: Pending | undefined;

const onUnload = (e: BeforeUnloadEvent): void => e.preventDefault();

/** Whether the verdict's dialog is open or a verdict waits out its undo window (the shortcuts then do nothing). */
export function verdictBusy(): boolean {
  return pending !== undefined || document.querySelector('dialog[open]') !== null;
}

function stop(p: Pending): void {
  for (const t of p.timers) clearTimeout(t);
  if (pending === p) pending = undefined;
  window.removeEventListener('beforeunload', onUnload);
}

function buttons(disabled: boolean): void {
  for (const b of document.querySelectorAll<HTMLButtonElement>('button.verdict')) b.disabled = disabled;
}

function post(p: Pending): Promise<unknown> {
  return call('casesVerdict', { params: { id: p.caseId }, body: p.body });
}

/** Sends the verdict now: the window ran out. The queue then moves on. */
async function send(p: Pending): Promise<void> {
  stop(p);
  document.getElementById('verdict-pending-text')?.replaceChildren(`Closing case ${p.caseId}…`);
  document.getElementById('verdict-undo')?.setAttribute('disabled', '');
  try {
    await post(p);
  } catch (e) {
    document.getElementById('verdict-pending')?.setAttribute('hidden', '');
    buttons(false);
    throw e;
  }
  await takeNext(`Case ${p.caseId} closed as ${WORD[p.verdict]}. `);
}

/** Undo: the verdict is not sent; the case stays open and the focus goes back to its button. */
function undo(p: Pending): void {
  stop(p);
  document.getElementById('verdict-pending')?.setAttribute('hidden', '');
  buttons(false);
  document.getElementById(`verdict-${p.verdict}`)?.focus();
  say(`Undone: case ${p.caseId} stays open.`);
}

/** Escape in the undo window undoes. */
export function undoPending(): boolean {
  if (pending === undefined) return false;
  undo(pending);
  return true;
}

/** The page is left in the undo window: the verdict, confirmed, is sent now (the queue does not move on). */
export function flushVerdict(): void {
  const p = pending;
  if (p === undefined) return;
  stop(p);
  void post(p)
    .then(() => say(`Case ${p.caseId} closed as ${WORD[p.verdict]}.`))
    .catch(fail);
}

function start(p: Pending): void {
  const box = document.getElementById('verdict-pending');
  const text = document.getElementById('verdict-pending-text');
  if (box === null || text === null) return;
  const ms = undoMs();
  const ends = Date.now() + ms;
  const line = (): string =>
    `Case ${p.caseId} closes as ${WORD[p.verdict]} in ${Math.max(0, Math.ceil((ends - Date.now()) / 1000))} s.`;
  pending = p;
  buttons(true);
  text.replaceChildren(line());
  box.removeAttribute('hidden');
  document.getElementById('verdict-undo')?.removeAttribute('disabled');
  document.getElementById('verdict-undo')?.focus();
  say(`${line()} Undo (or Escape) keeps it open.`);
  window.addEventListener('beforeunload', onUnload);
  for (let s = 1000; s < ms; s += 1000) p.timers.push(window.setTimeout(() => text.replaceChildren(line()), s));
  p.timers.push(window.setTimeout(() => void send(p).catch(fail), ms));
}

function value(c: Case, l: CaseListOption): string | undefined {
  const v = c.payment[l.key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** What the verdict writes, for the dialog. */
function consequences(c: Case, body: Pending['body'], lists: readonly CaseListOption[]): string[] {
  const out = [`Transaction ${c.transactionId} is labelled ${WORD[body.verdict]}.`];
  if (body.reason !== undefined) out.push(`Reason: ${body.reason}`);
  const list = lists.find((l) => l.name === body.addToList?.list);
  if (list !== undefined)
    out.push(`The ${KEY_LABEL[list.key] ?? list.key} ${value(c, list) ?? ''} is added to the list ${list.name}.`);
  return out;
}

/** Opens the dialog that asks before verdict `v`; its confirm starts the undo window. */
function ask(c: Case, me: Me, v: Verdict, lists: readonly CaseListOption[]): void {
  if (verdictBusy()) return;
  const reason = (document.getElementById('verdict-reason') as HTMLInputElement | null)?.value.trim() ?? '';
  const list = (document.getElementById('verdict-list') as HTMLSelectElement | null)?.value ?? '';
  const body: Pending['body'] = {
    verdict: v,
    ...(reason === '' ? {} : { reason }),
    ...(list === '' ? {} : { addToList: { list } }),
  };
  const other = c.assignee !== undefined && c.assignee !== me.name ? c.assignee : undefined;
  const dialog = h(
    'dialog',
    { id: 'verdict-confirm', 'aria-labelledby': 'confirm-h', 'aria-describedby': 'confirm-what' },
    h('h2', { id: 'confirm-h' }, `Close case ${c.id} as ${WORD[v]}?`),
    other === undefined
      ? null
      : h(
          'p',
          { class: 'warning', id: 'confirm-assignee' },
          `This case is assigned to ${other}, not to you. Closing it ends their review.`,
        ),
    h(
      'ul',
      { id: 'confirm-what' },
      consequences(c, body, lists).map((t) => h('li', {}, t)),
    ),
    undoMs() === 0 ? null : h('p', {}, `You can undo for ${Math.ceil(undoMs() / 1000)} s after you confirm.`),
    h(
      'form',
      { method: 'dialog', class: 'actions' },
      h(
        'button',
        { class: `${v}`, value: 'confirm', id: 'confirm-verdict', autofocus: true },
        other === undefined ? `Close as ${WORD[v]}` : `Close ${other}'s case as ${WORD[v]}`,
      ),
      h('button', { value: 'cancel', id: 'confirm-cancel' }, 'Cancel'),
    ),
  );
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (dialog.returnValue === 'confirm') start({ caseId: c.id, verdict: v, body, timers: [] });
    else {
      say(`Not closed: case ${c.id} stays open.`);
      document.getElementById(`verdict-${v}`)?.focus();
    }
  });
  document.getElementById('main')?.append(dialog);
  dialog.showModal();
  document.getElementById('confirm-verdict')?.focus();
}

/** The lead's pick-list of the active ruleset's lists (the ones the payment has no value for cannot be picked). */
function listPicker(c: Case, lists: readonly CaseListOption[]): HTMLElement {
  if (lists.length === 0) return h('p', { id: 'verdict-no-lists' }, 'The active ruleset declares no list to add to.');
  return h(
    'label',
    { class: 'field' },
    'Add to a list (optional)',
    h(
      'select',
      { id: 'verdict-list' },
      h('option', { value: '' }, 'No list'),
      lists.map((l) => {
        const v = value(c, l);
        const key = KEY_LABEL[l.key] ?? l.key;
        return h(
          'option',
          { value: l.name, disabled: v === undefined },
          v === undefined ? `${l.name} (the payment has no ${key})` : `${l.name}: the ${key} ${v}`,
        );
      }),
    ),
  );
}

/** The verdict section of an open case; `lists`: the lead's lists (absent for an analyst). */
export function verdictSection(c: Case, me: Me, lists: readonly CaseListOption[] | undefined): HTMLElement {
  const other = c.assignee !== undefined && c.assignee !== me.name ? c.assignee : undefined;
  const button = (v: Verdict, label: string, key: string): HTMLElement =>
    h(
      'button',
      {
        class: `${v} verdict`,
        id: `verdict-${v}`,
        'aria-keyshortcuts': key,
        onclick: () => ask(c, me, v, lists ?? []),
      },
      label,
    );
  return h(
    'section',
    { 'aria-labelledby': 'verdict-h', class: 'verdict-box' },
    h('h2', { id: 'verdict-h' }, 'Verdict'),
    other === undefined
      ? null
      : h(
          'p',
          { class: 'warning', id: 'verdict-assignee' },
          `Assigned to ${other}, not to you: a verdict closes their case (you are asked first).`,
        ),
    h(
      'p',
      {},
      'Shortcuts: ',
      h('kbd', {}, 'f'),
      ' fraud, ',
      h('kbd', {}, 'l'),
      ' legitimate. You confirm, then have a few seconds to undo.',
    ),
    h('label', { class: 'field' }, 'Reason (optional)', h('input', { id: 'verdict-reason', maxlength: 500 })),
    lists === undefined ? null : listPicker(c, lists),
    h('div', { class: 'actions' }, button('fraud', 'Fraud', 'f'), button('legit', 'Legitimate', 'l')),
    h(
      'div',
      { id: 'verdict-pending', class: 'pending', hidden: true },
      h('span', { id: 'verdict-pending-text' }),
      h(
        'button',
        {
          id: 'verdict-undo',
          'aria-keyshortcuts': 'Escape',
          onclick: () => void undoPending(),
        },
        'Undo',
      ),
    ),
  );
}
