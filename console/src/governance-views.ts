/**
 * The audit trail (docs/audit.md): one page of entries, newest first, with its filters; the Name filter offers the
 * lists the active ruleset declares. The rule-change pages are draft-views.ts and draft-view.ts.
 */
import { call } from './api.js';
import { h, showPage, table, when } from './dom.js';
import { listNames } from './lists-view.js';

/** The audit trail, newest first, with its filters. */
export async function showAudit(q: URLSearchParams): Promise<void> {
  const get = (k: string): string | undefined => q.get(k) ?? undefined;
  const iso = (v: string | undefined): string | undefined => (v === undefined ? undefined : new Date(v).toISOString());
  const [page, lists] = await Promise.all([
    call('auditList', {
      query: {
        kind: get('kind'),
        name: get('name'),
        actor: get('actor'),
        from: iso(get('from')),
        to: iso(get('to')),
        cursor: get('cursor'),
      },
    }),
    listNames(),
  ]);
  const field = (label: string, name: string, type = 'text', list?: string): HTMLElement =>
    h('label', {}, label, h('input', { name, id: `a-${name}`, type, value: get(name) ?? '', list }));
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
      field('Name', 'name', 'text', 'a-names'),
      h(
        'datalist',
        { id: 'a-names' },
        lists.map((n) => h('option', { value: n })),
      ),
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
