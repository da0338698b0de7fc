/**
 * The case page's "The user's recent held payments" (the same user's other cases: what was paid, where, the
 * decision and its outcome in words) and "History and notes" (each entry of the case's history as a sentence).
 */
import { h, table, when } from './dom.js';
import { money } from './queue.js';
import type { Case, CaseEvent } from './types.js';

const VERDICT: Readonly<Record<string, string>> = { fraud: 'Fraud', legit: 'Legitimate' };

/** A verdict in words (`Fraud`, `Legitimate`). */
export function verdictWord(v: string | undefined): string {
  return v === undefined ? '—' : (VERDICT[v] ?? v);
}

/** What became of a case: its verdict once closed, else who is on it. */
export function outcome(c: Case): string {
  if (c.state === 'closed') return `${verdictWord(c.verdict)} (closed ${when(c.closedAt)})`;
  if (c.state === 'assigned') return `Being reviewed${c.assignee === undefined ? '' : ` by ${c.assignee}`}`;
  return 'Waiting for review';
}

/** The same user's other cases, newest first. */
export function userCasesSection(userCases: readonly Case[]): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'hist-h' },
    h('h2', { id: 'hist-h' }, "The user's recent held payments"),
    h(
      'p',
      { class: 'help' },
      'The other payments of this user that were held for review (newest first, at most 20). Payments that were ' +
        'approved or declined without review are not kept here; they are under Recent payments, their counts under ' +
        'Recent activity.',
    ),
    userCases.length === 0
      ? h('p', { id: 'user-cases-none' }, 'None: this is the only payment of this user held for review.')
      : table(
          "The user's recent held payments",
          ['Case', 'Decided', 'Amount', 'Merchant', 'Score', 'Decision', 'Outcome'],
          userCases.map((u) => [
            h('a', { href: `#/case/${encodeURIComponent(u.id)}` }, `Case ${u.id}`),
            when(u.decidedAt),
            money(u.payment),
            String(u.payment['merchantId'] ?? '—'),
            u.score === null ? '—' : u.score.toFixed(3),
            u.decision,
            outcome(u),
          ]),
          [2, 4],
        ),
  );
}

function str(d: Readonly<Record<string, unknown>> | undefined, key: string): string | undefined {
  const v = d?.[key];
  return v === undefined || v === null ? undefined : String(v);
}

/** One entry of a case's history as a sentence. */
export function eventText(e: CaseEvent): string {
  const d = e.detail;
  switch (e.action) {
    case 'opened':
      return 'The payment was held for review: the case opened.';
    case 'assigned':
      return `${e.actor} took the case.`;
    case 'reassigned':
      return `${e.actor} assigned the case to ${str(d, 'assignee') ?? 'someone'}.`;
    case 'note':
      return `${e.actor} noted: ${str(d, 'text') ?? ''}`;
    case 'verdict': {
      const reason = str(d, 'reason');
      return `${e.actor} closed the case as ${verdictWord(str(d, 'verdict')).toLowerCase()}.${reason === undefined ? '' : ` Reason: ${reason}`}`;
    }
    default: {
      const rest = Object.entries(d ?? {}).map(
        ([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
      );
      return `${e.actor}: ${e.action}${rest.length === 0 ? '' : ` (${rest.join(', ')})`}.`;
    }
  }
}

/** The history, oldest first, each entry with its time. */
export function historyList(events: readonly CaseEvent[]): HTMLElement {
  return h(
    'ol',
    { id: 'case-history' },
    events.map((e) => h('li', {}, h('span', { class: 'when' }, when(e.at)), ' · ', eventText(e))),
  );
}
