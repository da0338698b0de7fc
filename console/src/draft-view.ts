/**
 * One draft (docs/governance.md): its state, its changes against the serving version, its backtest, and what the
 * caller may do with it: a lead runs the backtest and submits; another lead approves or rejects; a lead promotes
 * an approved draft (the four-eyes gate of the admin promote). Analysts read it, without controls.
 */
import { call } from './api.js';
import { h, say, showPage, when } from './dom.js';
import { backtestResult } from './draft-backtest-view.js';
import { diffSection } from './draft-diff-view.js';
import { serving, type Draft } from './draft-types.js';
import type { Me } from './types.js';

const DAY = 86_400_000;
const local = (ms: number): string => new Date(ms - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
const fail = (e: unknown): void => say(e instanceof Error ? e.message : String(e), true);

/** The backtest form (leads, before approval). */
function backtestForm(run: () => Promise<void>): HTMLElement {
  return h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Backtest window',
      onsubmit: (e: Event) => {
        e.preventDefault();
        void run().catch(fail);
      },
    },
    h(
      'label',
      {},
      'From',
      h('input', { id: 'bt-from', type: 'datetime-local', value: local(Date.now() - 7 * DAY), required: true }),
    ),
    h(
      'label',
      {},
      'To',
      h('input', { id: 'bt-to', type: 'datetime-local', value: local(Date.now() + 60_000), required: true }),
    ),
    h('button', { type: 'submit', id: 'run-backtest' }, 'Run backtest'),
  );
}

/** Approve or reject, for a lead, of a submitted draft. */
function approval(d: Draft, act: (a: 'approve' | 'reject') => void): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'decide-h' },
    h('h2', { id: 'decide-h' }, 'Approval'),
    h('p', {}, `Another lead than its author (${d.author}) approves or rejects it.`),
    h('label', { for: 'decision-comment' }, 'Comment'),
    ' ',
    h('input', { id: 'decision-comment', maxlength: 500 }),
    h(
      'div',
      { class: 'actions' },
      h('button', { class: 'legit', id: 'approve', onclick: () => act('approve') }, 'Approve'),
      h('button', { class: 'fraud', id: 'reject', onclick: () => act('reject') }, 'Reject'),
    ),
  );
}

/** Promote, for a lead, of an approved draft that does not serve yet. */
function promotion(d: Draft, servingVersion: string, promote: () => void): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'promote-h' },
    h('h2', { id: 'promote-h' }, 'Promote'),
    h(
      'p',
      { id: 'promote-help' },
      `Approved by ${d.approver ?? 'another lead'}. Promote makes ${d.version} the active version on every instance, in place of ${servingVersion}.`,
    ),
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        { class: 'primary', id: 'promote', 'aria-describedby': 'promote-help', onclick: promote },
        `Promote ${d.version}`,
      ),
    ),
  );
}

/** One draft: its changes, its backtest, and what the caller may do with it. */
export async function showDraft(version: string, me: Me): Promise<void> {
  const rs = await serving();
  const params = { name: rs.name, version };
  const [d, diff] = await Promise.all([
    call('rulesetDraft', { params }),
    call('rulesetDraftDiff', { params }).catch(() => undefined),
  ]);
  const lead = me.roles.includes('lead');
  const decide = (action: 'submit' | 'approve' | 'reject', comment: string): Promise<Draft> => {
    const route = {
      submit: 'rulesetDraftSubmit',
      approve: 'rulesetDraftApprove',
      reject: 'rulesetDraftReject',
    } as const;
    return call(route[action], { params, body: { comment } });
  };
  const act = (action: 'submit' | 'approve' | 'reject' | 'promote'): void => {
    const comment = (document.getElementById('decision-comment') as HTMLInputElement | null)?.value.trim() ?? '';
    const done = action === 'promote' ? call('rulesetDraftPromote', { params }) : decide(action, comment);
    void done
      .then(async () => {
        const done = { submit: 'submitted for approval', approve: 'approved', reject: 'rejected', promote: 'promoted' };
        say(`Draft ${version}: ${done[action]}.`);
        await showDraft(version, me);
      })
      .catch(fail);
  };
  const runBacktest = async (): Promise<void> => {
    const from = (document.getElementById('bt-from') as HTMLInputElement).value;
    const to = (document.getElementById('bt-to') as HTMLInputElement).value;
    const body = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
    let b = await call('rulesetDraftBacktestRun', { params, body });
    // bounded wait: one look a second for at most two minutes, then the page says it is still running
    for (let i = 0; i < 120 && b.state === 'running'; i++) {
      document.getElementById('backtest')?.replaceChildren(backtestResult(b));
      await new Promise((r) => setTimeout(r, 1000));
      b = await call('rulesetDraftBacktest', { params });
    }
    say(b.state === 'done' ? 'Backtest done.' : `Backtest ${b.state}.`);
    await showDraft(version, me);
  };
  const open = d.state === 'draft' || d.state === 'rejected';
  const isServing = d.version === rs.version;
  showPage(
    `Draft ${d.version}`,
    h(
      'p',
      { id: 'draft-state' },
      `${d.name} ${d.version}: ${d.state}${isServing ? ', serving' : ''}. Author ${d.author}${d.approver === undefined ? '' : `; decided by ${d.approver}`}${d.comment === undefined ? '' : ` (“${d.comment}”)`}. Updated ${when(d.updatedAt)}.`,
    ),
    lead ? null : h('p', { id: 'draft-read-only' }, 'Read only: leads run the backtest, submit, approve and promote.'),
    diff === undefined || isServing ? null : diffSection(d.version, diff),
    h(
      'section',
      { 'aria-labelledby': 'bt-h' },
      h('h2', { id: 'bt-h' }, 'Backtest on past payments'),
      lead && open ? backtestForm(runBacktest) : null,
      h('div', { id: 'backtest' }, d.backtest === undefined ? h('p', {}, 'Not run yet.') : backtestResult(d.backtest)),
    ),
    lead && open
      ? h(
          'div',
          { class: 'actions' },
          h('button', { class: 'primary', id: 'submit-draft', onclick: () => act('submit') }, 'Submit for approval'),
        )
      : null,
    lead && d.state === 'submitted' ? approval(d, act) : null,
    lead && d.state === 'approved' && !isServing ? promotion(d, rs.version, () => act('promote')) : null,
    h('details', {}, h('summary', {}, 'The whole document'), h('pre', {}, JSON.stringify(d.document, null, 2))),
  );
}
