/** One case: the payment, why it was held, the versions, the user's other cases, notes, and the verdict (keys `f`, `l`). */
import { api } from './api.js';
import { signalSections } from './case-signals.js';
import { h, say, showPage, table, typing, when } from './dom.js';
import { fail, takeNext } from './queue.js';
import type { Case, CaseDetail, Me } from './types.js';

let shortcuts: ((e: KeyboardEvent) => void) | undefined;

/** Removes the case page's shortcuts (another page is shown). */
export function leaveCase(): void {
  if (shortcuts !== undefined) document.removeEventListener('keydown', shortcuts);
  shortcuts = undefined;
}

function fields(record: Readonly<Record<string, unknown>>): HTMLElement {
  return h(
    'dl',
    { class: 'fields' },
    Object.entries(record).map(([k, v]) => [
      h('dt', {}, k),
      h('dd', {}, typeof v === 'object' ? JSON.stringify(v) : String(v)),
    ]),
  );
}

async function verdict(c: Case, v: 'fraud' | 'legit'): Promise<void> {
  const reason = (document.getElementById('verdict-reason') as HTMLInputElement | null)?.value.trim() ?? '';
  const list = (document.getElementById('verdict-list') as HTMLInputElement | null)?.value.trim() ?? '';
  const body: Record<string, unknown> = { verdict: v };
  if (reason !== '') body['reason'] = reason;
  if (list !== '') body['addToList'] = { list };
  for (const b of document.querySelectorAll<HTMLButtonElement>('button.verdict')) b.disabled = true;
  try {
    await api(`cases/${encodeURIComponent(c.id)}/verdict`, { method: 'POST', body });
  } catch (e) {
    for (const b of document.querySelectorAll<HTMLButtonElement>('button.verdict')) b.disabled = false;
    throw e;
  }
  // the queue moves on: the next case opens (or the queue, when none is left)
  await takeNext(`Case ${c.id} closed as ${v}. `);
}

/** Renders case `id` for `me`. */
export async function showCase(id: string, me: Me): Promise<void> {
  leaveCase();
  const d = await api<CaseDetail>(`cases/${encodeURIComponent(id)}`);
  const c = d.case;
  const open = c.state !== 'closed';
  const lead = me.roles.includes('lead');
  const reasons = table(
    'Top reasons',
    ['Reason', 'Contribution'],
    c.reasons.map((r) => [h('span', {}, r.description, ' ', h('code', {}, r.code)), r.contribution.toFixed(3)]),
    [1],
  );
  const verdictBox = open
    ? h(
        'section',
        { 'aria-labelledby': 'verdict-h' },
        h('h2', { id: 'verdict-h' }, 'Verdict'),
        h('p', {}, 'Shortcuts: ', h('kbd', {}, 'f'), ' fraud, ', h('kbd', {}, 'l'), ' legitimate.'),
        h('label', { for: 'verdict-reason' }, 'Reason (optional)'),
        ' ',
        h('input', { id: 'verdict-reason', maxlength: 500 }),
        lead
          ? [
              ' ',
              h('label', { for: 'verdict-list' }, 'Add the user to list (optional)'),
              ' ',
              h('input', { id: 'verdict-list', placeholder: 'blocked_users' }),
            ]
          : null,
        h(
          'div',
          { class: 'actions' },
          h(
            'button',
            {
              class: 'fraud verdict',
              id: 'verdict-fraud',
              'aria-keyshortcuts': 'f',
              onclick: () => void verdict(c, 'fraud').catch(fail),
            },
            'Fraud',
          ),
          h(
            'button',
            {
              class: 'legit verdict',
              id: 'verdict-legit',
              'aria-keyshortcuts': 'l',
              onclick: () => void verdict(c, 'legit').catch(fail),
            },
            'Legitimate',
          ),
        ),
      )
    : h(
        'p',
        { id: 'closed' },
        `Closed as ${c.verdict ?? '—'} by ${c.closedBy ?? '—'} on ${when(c.closedAt)}.`,
        c.verdictReason === undefined ? '' : ` Reason: ${c.verdictReason}`,
      );
  const noteForm = h(
    'form',
    {
      class: 'note',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const text = (document.getElementById('note-text') as HTMLTextAreaElement).value.trim();
        if (text === '') return say('Write the note first.', true);
        void api(`cases/${encodeURIComponent(c.id)}/notes`, { method: 'POST', body: { text } })
          .then(() => showCase(c.id, me))
          .then(() => say('Note added.'))
          .catch(fail);
      },
    },
    h('label', { for: 'note-text' }, 'Note'),
    h('textarea', { id: 'note-text', rows: 3, cols: 60, maxlength: 2000 }),
    h('div', {}, h('button', { type: 'submit' }, 'Add note')),
  );
  showPage(
    `Case ${c.id}`,
    h(
      'p',
      { id: 'case-summary' },
      `Decision ${c.decision}, score ${c.score === null ? '—' : c.score.toFixed(3)}, ${c.state}${c.assignee === undefined ? '' : ` (${c.assignee})`}. Decided ${when(c.decidedAt)}.`,
    ),
    verdictBox,
    h(
      'div',
      { class: 'grid' },
      h('section', { 'aria-labelledby': 'pay-h' }, h('h2', { id: 'pay-h' }, 'Payment'), fields(c.payment)),
      h(
        'section',
        { 'aria-labelledby': 'why-h' },
        h('h2', { id: 'why-h' }, 'Why it was held'),
        reasons,
        h('h3', {}, 'Rules that fired'),
        c.rules.length === 0
          ? h('p', {}, 'None.')
          : h(
              'ul',
              { id: 'rules-fired' },
              c.rules.map((r) => h('li', {}, `${r.id} (${r.action})`)),
            ),
        c.ruleErrors.length === 0
          ? null
          : [
              h('h3', {}, 'Rule errors'),
              h(
                'ul',
                {},
                c.ruleErrors.map((r) => h('li', {}, r)),
              ),
            ],
        c.escalation === undefined ? null : [h('h3', {}, 'Second opinion'), fields(c.escalation)],
        h('h3', {}, 'Versions'),
        fields({
          model: `${c.model.name} ${c.model.version}`,
          ruleset: c.ruleset === undefined ? '—' : `${c.ruleset.name} ${c.ruleset.version}`,
          profile: c.profile?.id ?? '—',
        }),
      ),
    ),
    signalSections(d),
    h(
      'section',
      { 'aria-labelledby': 'hist-h' },
      h('h2', { id: 'hist-h' }, "The user's other cases"),
      d.userCases.length === 0
        ? h('p', {}, 'None.')
        : table(
            "The user's other cases",
            ['Case', 'Decided', 'Score', 'Decision', 'Verdict'],
            d.userCases.map((u) => [
              h('a', { href: `#/case/${encodeURIComponent(u.id)}` }, `Case ${u.id}`),
              when(u.decidedAt),
              u.score === null ? '—' : u.score.toFixed(3),
              u.decision,
              u.verdict ?? u.state,
            ]),
            [2],
          ),
    ),
    h(
      'section',
      { 'aria-labelledby': 'notes-h' },
      h('h2', { id: 'notes-h' }, 'History and notes'),
      h(
        'ol',
        {},
        d.events.map((e) =>
          h(
            'li',
            {},
            `${when(e.at)} · ${e.actor} · ${e.action}`,
            e.detail === undefined
              ? ''
              : ` · ${e.action === 'note' ? String(e.detail['text'] ?? '') : JSON.stringify(e.detail)}`,
          ),
        ),
      ),
      open ? noteForm : null,
    ),
  );
  if (open) {
    shortcuts = (e: KeyboardEvent) => {
      if (typing(e)) return;
      if (e.key === 'f') document.getElementById('verdict-fraud')?.click();
      if (e.key === 'l') document.getElementById('verdict-legit')?.click();
    };
    document.addEventListener('keydown', shortcuts);
  }
}
