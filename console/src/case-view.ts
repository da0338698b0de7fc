/**
 * One case: the verdict first, then the payment's fields in a fixed labelled order, why it was held (the reasons in
 * plain words with their weight as bars, the rules that fired), the versions, the signals and recent activity, the
 * user's recent held payments, the user's recent payments as decided, and the history and notes. Keys: `f`, `l` (verdict), Escape (undo in the window).
 */
import { call } from './api.js';
import { paymentFields } from './case-fields.js';
import { secondOpinion } from './case-opinion.js';
import { historyList, userCasesSection, verdictWord } from './case-history.js';
import { reasonsView } from './case-reasons.js';
import { recentPaymentsSection } from './case-recent.js';
import { signalSections } from './case-signals.js';
import { flushVerdict, undoPending, verdictBusy, verdictSection } from './case-verdict.js';
import { h, say, showPage, typing, when } from './dom.js';
import { fail } from './queue.js';
import type { Case, Me } from './types.js';

let shortcuts: ((e: KeyboardEvent) => void) | undefined;

/** Removes the case page's shortcuts (another page is shown); a verdict in its undo window is sent now. */
export function leaveCase(): void {
  flushVerdict();
  if (shortcuts !== undefined) document.removeEventListener('keydown', shortcuts);
  shortcuts = undefined;
}

function fields(record: Readonly<Record<string, string>>): HTMLElement {
  return h(
    'dl',
    { class: 'fields' },
    Object.entries(record).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
  );
}

function whySection(c: Case): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'why-h' },
    h('h2', { id: 'why-h' }, 'Why it was held'),
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
    h('h3', {}, "The model's top reasons"),
    reasonsView(c.reasons),
    c.escalation === undefined ? null : [h('h3', {}, 'Second opinion'), secondOpinion(c.escalation)],
    h('h3', {}, 'Versions'),
    fields({
      Model: `${c.model.name} ${c.model.version}`,
      Ruleset: c.ruleset === undefined ? '—' : `${c.ruleset.name} ${c.ruleset.version}`,
      Profile: c.profile?.id ?? '—',
    }),
  );
}

function noteForm(c: Case, me: Me): HTMLElement {
  return h(
    'form',
    {
      class: 'note',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const text = (document.getElementById('note-text') as HTMLTextAreaElement).value.trim();
        if (text === '') return say('Write the note first.', true);
        void call('casesNotes', { params: { id: c.id }, body: { text } })
          .then(() => showCase(c.id, me))
          .then(() => say('Note added.'))
          .catch(fail);
      },
    },
    h('label', { for: 'note-text' }, 'Note'),
    h('textarea', { id: 'note-text', rows: 3, cols: 60, maxlength: 2000 }),
    h('div', {}, h('button', { type: 'submit' }, 'Add note')),
  );
}

function summary(c: Case, me: Me): string {
  const who = c.state === 'assigned' ? ` to ${c.assignee === me.name ? 'you' : (c.assignee ?? 'someone')}` : '';
  return `Decision ${c.decision}, score ${c.score === null ? '—' : c.score.toFixed(3)}; ${c.state}${who}. Decided ${when(c.decidedAt)}.`;
}

/** Renders case `id` for `me`. */
export async function showCase(id: string, me: Me): Promise<void> {
  leaveCase();
  const d = await call('casesGet', { params: { id } });
  const c = d.case;
  const open = c.state !== 'closed';
  showPage(
    `Case ${c.id}`,
    h('p', { id: 'case-summary' }, summary(c, me)),
    open
      ? verdictSection(c, me, me.roles.includes('lead') ? (d.lists ?? []) : undefined)
      : h(
          'p',
          { id: 'closed' },
          `Closed as ${verdictWord(c.verdict).toLowerCase()} by ${c.closedBy ?? '—'} on ${when(c.closedAt)}.`,
          c.verdictReason === undefined ? '' : ` Reason: ${c.verdictReason}`,
        ),
    h(
      'div',
      { class: 'grid' },
      h('section', { 'aria-labelledby': 'pay-h' }, h('h2', { id: 'pay-h' }, 'Payment'), paymentFields(c.payment)),
      whySection(c),
    ),
    signalSections(d),
    userCasesSection(d.userCases),
    recentPaymentsSection(d),
    h(
      'section',
      { 'aria-labelledby': 'notes-h' },
      h('h2', { id: 'notes-h' }, 'History and notes'),
      historyList(d.events),
      open ? noteForm(c, me) : null,
    ),
  );
  if (open) {
    shortcuts = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && undoPending()) return e.preventDefault();
      if (typing(e) || verdictBusy()) return;
      if (e.key === 'f') document.getElementById('verdict-fraud')?.click();
      if (e.key === 'l') document.getElementById('verdict-legit')?.click();
    };
    document.addEventListener('keydown', shortcuts);
  }
}
