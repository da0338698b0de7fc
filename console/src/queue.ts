/** The queue: filters, one page of cases at a time, and "take next" (key `n`). */
import { api, query } from './api.js';
import { h, say, showPage, table, when } from './dom.js';
import type { Case } from './types.js';

/** The filters a queue view was opened with (kept in the hash, so a filtered queue can be bookmarked). */
export interface QueueFilters {
  status?: string;
  rule?: string;
  merchantId?: string;
  minScore?: string;
  cursor?: string;
}

/** Assigns the oldest open case to the caller and opens it; `before` is said first (what was just done). */
export async function takeNext(before = ''): Promise<void> {
  const r = await api<{ case: Case } | undefined>('cases/next', { method: 'POST' });
  if (r === undefined) {
    say(`${before}The queue is empty: no open case is left.`);
    if (before !== '') location.hash = '#/queue';
    return;
  }
  say(`${before}Case ${r.case.id} is yours.`);
  location.hash = `#/case/${encodeURIComponent(r.case.id)}`;
}

function field(
  label: string,
  name: keyof QueueFilters,
  value: string | undefined,
  attrs: Record<string, string> = {},
): HTMLElement {
  return h('label', {}, label, h('input', { name, id: `f-${name}`, value: value ?? '', ...attrs }));
}

/** Renders the queue with `filters`. */
export async function showQueue(filters: QueueFilters): Promise<void> {
  const status = filters.status ?? 'open';
  const page = await api<{ cases: Case[]; cursor?: string }>(
    `cases${query({ status: status === 'any' ? undefined : status, rule: filters.rule, merchantId: filters.merchantId, minScore: filters.minScore, cursor: filters.cursor, order: 'oldest' })}`,
  );
  const form = h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Filter the queue',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const d = new FormData(e.target as HTMLFormElement);
        const q = new URLSearchParams();
        for (const [k, v] of d) if (typeof v === 'string' && v !== '') q.set(k, v);
        location.hash = `#/queue?${q}`;
      },
    },
    h(
      'label',
      {},
      'Status',
      h(
        'select',
        { name: 'status', id: 'f-status' },
        ['open', 'assigned', 'closed', 'any'].map((s) => h('option', { value: s, selected: s === status }, s)),
      ),
    ),
    field('Rule that fired', 'rule', filters.rule),
    field('Merchant', 'merchantId', filters.merchantId),
    field('Score at least', 'minScore', filters.minScore, { inputmode: 'decimal' }),
    h('button', { type: 'submit' }, 'Filter'),
  );
  const rows = page.cases.map((c) => [
    h('a', { href: `#/case/${encodeURIComponent(c.id)}` }, `Case ${c.id}`),
    when(c.decidedAt),
    c.score === null ? '—' : c.score.toFixed(3),
    c.rules.map((r) => r.id).join(', ') || '—',
    String(c.payment['merchantId'] ?? '—'),
    c.state,
    c.assignee ?? '—',
  ]);
  const next =
    page.cursor === undefined
      ? null
      : h('a', { href: `#/queue?${new URLSearchParams({ ...strip(filters), cursor: page.cursor })}` }, 'Next page');
  showPage(
    'Queue',
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        { class: 'primary', id: 'take-next', 'aria-keyshortcuts': 'n', onclick: () => void takeNext().catch(fail) },
        'Take next',
      ),
      h('span', {}, 'Shortcut: ', h('kbd', {}, 'n')),
    ),
    form,
    page.cases.length === 0
      ? h('p', { id: 'empty' }, 'No case matches.')
      : table('Cases, oldest first', ['Case', 'Decided', 'Score', 'Rules', 'Merchant', 'State', 'Assignee'], rows, [2]),
    next,
  );
}

function strip(f: QueueFilters): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(f)) if (k !== 'cursor' && typeof v === 'string' && v !== '') out[k] = v;
  return out;
}

/** Shows a failed call in the live region. */
export function fail(e: unknown): void {
  say(e instanceof Error ? e.message : String(e), true);
}
