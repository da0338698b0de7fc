/**
 * The queue: filters, one page of cases at a time with their age and SLA, and "take next" (key `n`), which takes
 * the oldest open case matching the visible filters (queue, rule, merchant, score).
 */
import { call } from './api.js';
import { h, say, showPage, table, when } from './dom.js';
import type { Case } from './types.js';

/** The filters a queue view was opened with (kept in the hash, so a filtered queue can be bookmarked). */
export interface QueueFilters {
  status?: string;
  queue?: string;
  /** `me`: the caller's cases. */
  assignee?: string;
  rule?: string;
  merchantId?: string;
  minScore?: string;
  cursor?: string;
  /** The search: one case by its transaction id, or a user's cases. */
  transactionId?: string;
  userId?: string;
}

/** The filters of the queue shown last: take next keeps to them (from the queue, and after a verdict). */
let shown: QueueFilters = {};

/**
 * Assigns the oldest open case matching the last queue's filters to the caller and opens it; `before` is said first
 * (what was just done).
 */
export async function takeNext(before = ''): Promise<void> {
  const { queue, rule, merchantId, minScore } = shown;
  const filtered = [queue, rule, merchantId, minScore].some((v) => v !== undefined && v !== '');
  const r = await call('casesNext', { query: { queue, rule, merchantId, minScore } });
  if (r === undefined) {
    say(`${before}${filtered ? 'No open case matches the filters.' : 'The queue is empty: no open case is left.'}`);
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

/** A duration in seconds, as `45 s`, `12 min`, `3 h 5 min` or `2 d 4 h`. */
export function age(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const hrs = Math.floor(m / 60);
  if (seconds < 60) return `${seconds} s`;
  if (m < 60) return `${m} min`;
  if (hrs < 24) return `${hrs} h ${m % 60} min`;
  return `${Math.floor(hrs / 24)} d ${hrs % 24} h`;
}

/** The SLA cell: breached, met (closed in time), or when it is due. */
function sla(c: Case): string {
  if (c.slaDueAt === undefined) return '—';
  if (c.slaBreached === true) return 'Breached';
  return c.state === 'closed' ? 'Met' : `Due ${when(c.slaDueAt)}`;
}

/** A payment's amount in its currency (`1,234.50 EUR`), or an em dash. */
export function money(payment: Readonly<Record<string, unknown>>): string {
  const amount = payment['amount'];
  const currency = payment['currency'];
  if (typeof amount !== 'number') return '—';
  const cur = typeof currency === 'string' ? currency : '';
  let n: string;
  try {
    n = amount.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  } catch {
    n = String(amount);
  }
  return cur === '' ? n : `${n} ${cur}`;
}

/** The search by transaction id or user id: a status of `any`, as a case found may be closed. */
function searchForm(filters: QueueFilters): HTMLElement {
  const by = filters.userId !== undefined ? 'userId' : 'transactionId';
  return h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Search cases',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const d = new FormData(e.target as HTMLFormElement);
        const v = String(d.get('search') ?? '').trim();
        const key = d.get('searchBy') === 'userId' ? 'userId' : 'transactionId';
        location.hash = v === '' ? '#/queue' : `#/queue?${new URLSearchParams({ status: 'any', [key]: v })}`;
      },
    },
    h(
      'label',
      {},
      'Search by',
      h(
        'select',
        { name: 'searchBy', id: 'f-searchBy' },
        h('option', { value: 'transactionId', selected: by === 'transactionId' }, 'transaction id'),
        h('option', { value: 'userId', selected: by === 'userId' }, 'user id'),
      ),
    ),
    h(
      'label',
      {},
      'Transaction or user id',
      h('input', {
        name: 'search',
        id: 'f-search',
        type: 'search',
        value: filters.transactionId ?? filters.userId ?? '',
      }),
    ),
    h('button', { type: 'submit' }, 'Search'),
  );
}

/** Renders the queue with `filters`. */
export async function showQueue(filters: QueueFilters): Promise<void> {
  shown = filters;
  const status = filters.status ?? 'open';
  const params = {
    status: status === 'any' ? undefined : status,
    queue: filters.queue,
    assignee: filters.assignee,
    rule: filters.rule,
    merchantId: filters.merchantId,
    minScore: filters.minScore,
    cursor: filters.cursor,
    order: 'oldest',
  };
  // a search by id goes in a body: ids never travel in a URL (request logs keep URLs)
  const ids = { transactionId: filters.transactionId, userId: filters.userId };
  const page =
    ids.transactionId === undefined && ids.userId === undefined
      ? await call('casesList', { query: params })
      : await call('casesSearch', {
          body: Object.fromEntries(Object.entries({ ...params, ...ids }).filter(([, v]) => v !== undefined)),
        });
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
    field('Queue', 'queue', filters.queue),
    h(
      'label',
      {},
      'Assigned to',
      h(
        'select',
        { name: 'assignee', id: 'f-assignee' },
        h('option', { value: '', selected: filters.assignee !== 'me' }, 'anyone'),
        h('option', { value: 'me', selected: filters.assignee === 'me' }, 'me'),
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
    c.ageSeconds === undefined ? '—' : age(c.ageSeconds),
    h('span', c.slaBreached === true ? { class: 'breached' } : {}, sla(c)),
    c.queue ?? '—',
    money(c.payment),
    String(c.payment['userId'] ?? '—'),
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
      h('a', { id: 'my-cases', href: '#/queue?status=assigned&assignee=me' }, 'My cases'),
    ),
    form,
    searchForm(filters),
    page.cases.length === 0
      ? h(
          'p',
          { id: 'empty' },
          filters.transactionId !== undefined
            ? `No case has the transaction id ${filters.transactionId}.`
            : filters.userId !== undefined
              ? `No case has the user id ${filters.userId}.`
              : 'No case matches.',
        )
      : table(
          'Cases, oldest first',
          [
            'Case',
            'Decided',
            'Age',
            'SLA',
            'Queue',
            'Amount',
            'User',
            'Score',
            'Rules',
            'Merchant',
            'State',
            'Assignee',
          ],
          rows,
          [2, 5, 7],
        ),
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
