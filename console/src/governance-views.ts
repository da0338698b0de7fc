/**
 * Rule changes (docs/governance.md): the drafts of the serving ruleset, a new draft edited with its compile errors
 * shown against the rule and the column, a draft's backtest on past payments, submit, approve or reject; and the
 * audit trail.
 */
import { api, ApiError, query, type FieldError } from './api.js';
import { h, pct, say, showPage, table, when } from './dom.js';
import type { Me } from './types.js';

interface DraftBacktest {
  state: 'running' | 'done' | 'failed';
  from: string;
  to: string;
  progress?: { replayed: number; total: number };
  result?: BacktestReport;
  error?: string;
}
interface Draft {
  name: string;
  version: string;
  document?: unknown;
  author: string;
  state: string;
  backtest?: DraftBacktest;
  approver?: string;
  comment?: string;
  createdAt: string;
  updatedAt: string;
}
interface BacktestReport {
  decisions: number;
  labelled: number;
  changes: Record<string, number>;
  fraudNowCaught: number;
  goodNowBlocked: number;
  goodNowHeld: number;
  reviewQueue: { current: number; candidate: number; days: number; growthPerDay: number };
  rules: Record<string, { hits: number; labelled: number; fraud: number; precision: number; recall: number }>;
  firingTogether: { rules: [string, string]; count: number }[];
  notReplayable?: { rule: string; fields?: string[] }[];
  lists?: {
    recordsWithoutMemberships: number;
    currentEntries: string[];
    notReplayed: { list: string; rules: string[]; records: number }[];
  };
}
interface AuditEvent {
  id: string;
  at: string;
  actor: string;
  kind: string;
  name: string;
  action: string;
  oldValue: unknown;
  newValue: unknown;
}

/** The serving ruleset: its name, version and document. */
async function serving(): Promise<{ name: string; version: string; document: unknown }> {
  return api('insights/ruleset');
}

const path = (name: string, rest = ''): string => `rulesets/${encodeURIComponent(name)}/drafts${rest}`;

/** The drafts of the serving ruleset, and "New draft". */
export async function showDrafts(): Promise<void> {
  const rs = await serving();
  const { drafts } = await api<{ drafts: Draft[] }>(path(rs.name));
  showPage(
    'Rule changes',
    h('p', {}, `Ruleset ${rs.name}, serving ${rs.version}. A draft serves only once another lead has approved it.`),
    h('p', {}, h('a', { href: '#/drafts/new', id: 'new-draft' }, 'New draft')),
    drafts.length === 0
      ? h('p', { id: 'no-drafts' }, 'No draft yet.')
      : table(
          'Drafts',
          ['Version', 'State', 'Author', 'Approver', 'Updated'],
          drafts.map((d) => [
            h('a', { href: `#/draft/${encodeURIComponent(d.version)}` }, d.version),
            d.state,
            d.author,
            d.approver ?? '—',
            when(d.updatedAt),
          ]),
        ),
  );
}

/** Where an error stands in the document's text: the line of its rule's `"id"`, when it names a rule. */
function lineOf(text: string, e: FieldError): number | undefined {
  if (e.rule === undefined) return undefined;
  const i = text.split('\n').findIndex((l) => l.includes(`"id"`) && l.includes(`"${e.rule}"`));
  return i < 0 ? undefined : i + 1;
}

/** The editor of a new draft: the serving document to start from; errors listed against the rule and column. */
export async function showNewDraft(): Promise<void> {
  const rs = await serving();
  const errors = h('ul', { id: 'draft-errors', 'aria-live': 'polite' });
  const editor = h('textarea', {
    id: 'draft-document',
    rows: 24,
    cols: 100,
    spellcheck: 'false',
    'aria-describedby': 'draft-help draft-errors',
  });
  editor.value = JSON.stringify({ ...(rs.document as object), version: '' }, null, 2);
  const save = async (): Promise<void> => {
    errors.replaceChildren();
    editor.removeAttribute('aria-invalid');
    let doc: unknown;
    try {
      doc = JSON.parse(editor.value);
    } catch (e) {
      errors.append(h('li', {}, `The document is not JSON: ${(e as Error).message}`));
      editor.setAttribute('aria-invalid', 'true');
      return;
    }
    try {
      const d = await api<Draft>(path(rs.name), { method: 'POST', body: doc });
      say(`Draft ${d.version} saved.`);
      location.hash = `#/draft/${encodeURIComponent(d.version)}`;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      editor.setAttribute('aria-invalid', 'true');
      const fields = e.fields.length > 0 ? e.fields : [{ path: '', message: e.message }];
      for (const f of fields) {
        const line = lineOf(editor.value, f);
        const where = [
          f.rule === undefined ? undefined : `rule ${f.rule}`,
          f.column === undefined ? undefined : `column ${f.column}`,
          line === undefined ? undefined : `line ${line}`,
        ].filter(Boolean);
        errors.append(
          h('li', { class: 'error-item' }, where.length > 0 ? `${where.join(', ')}: ` : '', f.message || f.path),
        );
      }
      say('The draft has errors: see the list below the editor.', true);
    }
  };
  showPage(
    'New draft',
    h(
      'p',
      { id: 'draft-help' },
      `A new version of ${rs.name}, starting from the serving ${rs.version}. Give it a new "version"; it is checked as an upload is (schema, compile, golden cases).`,
    ),
    h('label', { for: 'draft-document' }, 'Ruleset document (JSON)'),
    h('div', {}, editor),
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        { class: 'primary', id: 'save-draft', onclick: () => void save().catch((e: unknown) => say(String(e), true)) },
        'Check and save draft',
      ),
    ),
    h('h2', {}, 'Errors'),
    errors,
  );
}

/** One line on the lists replayed with today's entries, or not replayed; none when every list was as recorded. */
function listsLine(l: BacktestReport['lists']): HTMLElement | null {
  if (l === undefined || (l.currentEntries.length === 0 && l.notReplayed.length === 0)) return null;
  const old = l.recordsWithoutMemberships;
  const parts = [
    l.currentEntries.length === 0
      ? ''
      : `Lists replayed with today's entries, not as the payments saw them: ${l.currentEntries.join(', ')}${old > 0 ? ` (${old} decisions were logged before list memberships were)` : ''}.`,
    l.notReplayed.length === 0
      ? ''
      : `Not replayed (the logged decisions did not consult them; their rules count as not firing): ${l.notReplayed.map((n) => n.list).join(', ')}.`,
  ];
  return h('p', { id: 'backtest-lists' }, parts.filter((x) => x !== '').join(' '));
}

function backtestResult(b: DraftBacktest): HTMLElement {
  if (b.state === 'running')
    return h(
      'p',
      { id: 'backtest-state' },
      `Running: ${b.progress?.replayed ?? 0} of ${b.progress?.total ?? '?'} decisions replayed.`,
    );
  if (b.state === 'failed' || b.result === undefined)
    return h('p', { id: 'backtest-state' }, `Failed: ${b.error ?? 'no result'}.`);
  const r = b.result;
  return h(
    'div',
    { id: 'backtest-result' },
    h(
      'p',
      { id: 'backtest-summary' },
      `${r.decisions} decisions from ${when(b.from)} to ${when(b.to)}, ${r.labelled} labelled. Labelled fraud now caught: ${r.fraudNowCaught}. Labelled good now blocked: ${r.goodNowBlocked}, now held for review: ${r.goodNowHeld}. Review queue: ${r.reviewQueue.current} → ${r.reviewQueue.candidate} (${r.reviewQueue.growthPerDay >= 0 ? '+' : ''}${r.reviewQueue.growthPerDay} a day).`,
    ),
    listsLine(r.lists),
    table(
      'Decisions that change',
      ['Change', 'Payments'],
      Object.entries(r.changes).map(([k, v]) => [k, v]),
      [1],
    ),
    table(
      'Rules in the window',
      ['Rule', 'Hits', 'Labelled', 'Fraud', 'Precision', 'Recall'],
      Object.entries(r.rules).map(([id, x]) => [
        h('code', {}, id),
        x.hits,
        x.labelled,
        x.fraud,
        pct(x.precision),
        pct(x.recall),
      ]),
      [1, 2, 3, 4, 5],
    ),
    r.firingTogether.length === 0
      ? null
      : table(
          'Rules that fire together',
          ['Rules', 'Payments'],
          r.firingTogether.map((p) => [p.rules.join(' + '), p.count]),
          [1],
        ),
  );
}

/** One draft: its document, its backtest, and what the caller may do with it. */
export async function showDraft(version: string, me: Me): Promise<void> {
  const rs = await serving();
  const d = await api<Draft>(path(rs.name, `/${encodeURIComponent(version)}`));
  const lead = me.roles.includes('lead');
  const act = (action: 'submit' | 'approve' | 'reject') => async (): Promise<void> => {
    const comment = (document.getElementById('decision-comment') as HTMLInputElement | null)?.value.trim() ?? '';
    await api(path(rs.name, `/${encodeURIComponent(version)}/${action}`), { method: 'POST', body: { comment } });
    say(`Draft ${version}: ${action === 'submit' ? 'submitted for approval' : `${action}d`}.`);
    await showDraft(version, me);
  };
  const runBacktest = async (): Promise<void> => {
    const from = (document.getElementById('bt-from') as HTMLInputElement).value;
    const to = (document.getElementById('bt-to') as HTMLInputElement).value;
    const body = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
    let b = await api<DraftBacktest>(path(rs.name, `/${encodeURIComponent(version)}/backtest`), {
      method: 'POST',
      body,
    });
    // bounded wait: one look a second for at most two minutes, then the page says it is still running
    for (let i = 0; i < 120 && b.state === 'running'; i++) {
      document.getElementById('backtest')?.replaceChildren(backtestResult(b));
      await new Promise((r) => setTimeout(r, 1000));
      b = await api<DraftBacktest>(path(rs.name, `/${encodeURIComponent(version)}/backtest`));
    }
    say(b.state === 'done' ? 'Backtest done.' : `Backtest ${b.state}.`);
    await showDraft(version, me);
  };
  const day = 86_400_000;
  const local = (ms: number): string =>
    new Date(ms - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  const fail = (e: unknown): void => say(e instanceof Error ? e.message : String(e), true);
  const decide =
    lead && d.state === 'submitted'
      ? h(
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
            h('button', { class: 'legit', id: 'approve', onclick: () => void act('approve')().catch(fail) }, 'Approve'),
            h('button', { class: 'fraud', id: 'reject', onclick: () => void act('reject')().catch(fail) }, 'Reject'),
          ),
        )
      : null;
  showPage(
    `Draft ${d.version}`,
    h(
      'p',
      { id: 'draft-state' },
      `${d.name} ${d.version}: ${d.state}. Author ${d.author}${d.approver === undefined ? '' : `; decided by ${d.approver}`}${d.comment === undefined ? '' : ` (“${d.comment}”)`}. Updated ${when(d.updatedAt)}.`,
    ),
    h(
      'section',
      { 'aria-labelledby': 'bt-h' },
      h('h2', { id: 'bt-h' }, 'Backtest on past payments'),
      h(
        'form',
        {
          class: 'filters',
          onsubmit: (e: Event) => {
            e.preventDefault();
            void runBacktest().catch(fail);
          },
        },
        h(
          'label',
          {},
          'From',
          h('input', { id: 'bt-from', type: 'datetime-local', value: local(Date.now() - 7 * day), required: true }),
        ),
        h(
          'label',
          {},
          'To',
          h('input', { id: 'bt-to', type: 'datetime-local', value: local(Date.now() + 60_000), required: true }),
        ),
        h('button', { type: 'submit', id: 'run-backtest' }, 'Run backtest'),
      ),
      h('div', { id: 'backtest' }, d.backtest === undefined ? h('p', {}, 'Not run yet.') : backtestResult(d.backtest)),
    ),
    lead && d.state === 'draft'
      ? h(
          'div',
          { class: 'actions' },
          h(
            'button',
            { class: 'primary', id: 'submit-draft', onclick: () => void act('submit')().catch(fail) },
            'Submit for approval',
          ),
        )
      : null,
    decide,
    h('details', {}, h('summary', {}, 'The document'), h('pre', {}, JSON.stringify(d.document, null, 2))),
  );
}

/** The audit trail, newest first, with its filters. */
export async function showAudit(q: URLSearchParams): Promise<void> {
  const get = (k: string): string | undefined => q.get(k) ?? undefined;
  const iso = (v: string | undefined): string | undefined => (v === undefined ? undefined : new Date(v).toISOString());
  const page = await api<{ events: AuditEvent[]; cursor?: string }>(
    `audit${query({ kind: get('kind'), name: get('name'), actor: get('actor'), from: iso(get('from')), to: iso(get('to')), cursor: get('cursor') })}`,
  );
  const field = (label: string, name: string, type = 'text'): HTMLElement =>
    h('label', {}, label, h('input', { name, id: `a-${name}`, type, value: get(name) ?? '' }));
  const short = (v: unknown): string => (v === null || v === undefined ? '—' : JSON.stringify(v));
  const next = new URLSearchParams(q);
  if (page.cursor !== undefined) next.set('cursor', page.cursor);
  showPage(
    'Audit',
    h(
      'form',
      {
        class: 'filters',
        'aria-label': 'Filter the audit trail',
        onsubmit: (e: Event) => {
          e.preventDefault();
          const f = new URLSearchParams();
          for (const [k, v] of new FormData(e.target as HTMLFormElement))
            if (typeof v === 'string' && v !== '') f.set(k, v);
          location.hash = `#/audit?${f}`;
        },
      },
      h(
        'label',
        {},
        'Kind',
        h(
          'select',
          { name: 'kind', id: 'a-kind' },
          ['', 'ruleset', 'list', 'model', 'case', 'signals', 'webhook'].map((k) =>
            h('option', { value: k, selected: k === (get('kind') ?? '') }, k === '' ? 'any' : k),
          ),
        ),
      ),
      field('Name', 'name'),
      field('Actor', 'actor'),
      field('From', 'from', 'datetime-local'),
      field('To', 'to', 'datetime-local'),
      h('button', { type: 'submit' }, 'Filter'),
    ),
    page.events.length === 0
      ? h('p', { id: 'no-audit' }, 'No entry matches.')
      : table(
          'Audit entries, newest first',
          ['When', 'Actor', 'Kind', 'Name', 'Action', 'Old value', 'New value'],
          page.events.map((e) => [
            when(e.at),
            e.actor,
            e.kind,
            e.name,
            e.action,
            h('code', {}, short(e.oldValue)),
            h('code', {}, short(e.newValue)),
          ]),
        ),
    page.cursor === undefined ? null : h('a', { href: `#/audit?${next}` }, 'Older entries'),
  );
}
