/**
 * Lists (docs/console.md): the lists the serving ruleset declares with their entry counts; one list's entries,
 * page by page, with when each expires; a lead adds values (with an expiry) and removes one, each with a reason
 * the audit entry keeps. Analysts read. Values travel in request bodies, never in the address.
 */
import { call } from './api.js';
import type { ListSummary } from './api-contract.js';
import { h, say, showPage, table, when } from './dom.js';
import type { Me } from './types.js';

const DAY = 86_400;
/** The expiries offered when adding, in seconds (`0`: never). */
const EXPIRIES: readonly [string, number][] = [
  ['Never', 0],
  ['1 day', DAY],
  ['7 days', 7 * DAY],
  ['30 days', 30 * DAY],
  ['90 days', 90 * DAY],
  ['366 days', 366 * DAY],
];

const fail = (e: unknown): void => say(e instanceof Error ? e.message : String(e), true);
const value = (id: string): string => (document.getElementById(id) as HTMLInputElement | null)?.value ?? '';

/** The names of the declared lists (the pick-lists of the lead pages); none when they cannot be read. */
export async function listNames(): Promise<string[]> {
  return call('listsPeople')
    .then((r) => r.lists.map((l) => l.name))
    .catch(() => []);
}

/** The pick-list of the declared lists, opening the one chosen. */
function picker(lists: readonly ListSummary[], current: string): HTMLElement {
  return h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Choose a list',
      onsubmit: (e: Event) => {
        e.preventDefault();
        location.hash = `#/lists/${encodeURIComponent(value('list-pick'))}`;
      },
    },
    h(
      'label',
      {},
      'List',
      h(
        'select',
        { id: 'list-pick' },
        lists.map((l) => h('option', { value: l.name, selected: l.name === current }, l.name)),
      ),
    ),
    h('button', { type: 'submit' }, 'Show'),
  );
}

/** The add form of a lead: values one a line, an expiry, a reason. */
function addForm(name: string, key: string, reload: () => Promise<void>): HTMLElement {
  const add = async (): Promise<void> => {
    const values = value('add-values')
      .split('\n')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    const ttl = Number(value('add-ttl'));
    const body = { values, reason: value('add-reason').trim(), ...(ttl > 0 ? { ttlSeconds: ttl } : {}) };
    const r = await call('listEntriesAdd', { params: { name }, body });
    say(`Added ${r.added} value${r.added === 1 ? '' : 's'} to ${name}.`);
    await reload();
  };
  return h(
    'form',
    {
      class: 'list-add',
      'aria-labelledby': 'add-h',
      onsubmit: (e: Event) => {
        e.preventDefault();
        void add().catch(fail);
      },
    },
    h('h2', { id: 'add-h' }, `Add to ${name}`),
    h('label', { for: 'add-values' }, `Values (${key}), one a line`),
    h('textarea', { id: 'add-values', rows: 3, required: true, spellcheck: 'false' }),
    h('label', { for: 'add-ttl' }, 'Expires after'),
    h(
      'select',
      { id: 'add-ttl' },
      EXPIRIES.map(([label, s]) => h('option', { value: s }, label)),
    ),
    h('label', { for: 'add-reason' }, 'Reason'),
    h('input', { id: 'add-reason', required: true, maxlength: 500 }),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Add')),
  );
}

/** The removal of one value, with its reason: shown in the panel when its row's Remove is pressed. */
function removeForm(name: string, v: string, reload: () => Promise<void>): HTMLElement {
  const remove = async (): Promise<void> => {
    await call('listEntriesRemove', {
      params: { name },
      body: { value: v, reason: value('remove-reason').trim() },
    });
    say(`Removed ${v} from ${name}.`);
    await reload();
  };
  return h(
    'form',
    {
      class: 'list-remove',
      'aria-labelledby': 'remove-h',
      onsubmit: (e: Event) => {
        e.preventDefault();
        void remove().catch(fail);
      },
    },
    h('h2', { id: 'remove-h' }, `Remove ${v} from ${name}`),
    h('label', { for: 'remove-reason' }, 'Reason for the removal'),
    h('input', { id: 'remove-reason', required: true, maxlength: 500 }),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'fraud' }, 'Remove'),
      h('button', { type: 'button', onclick: () => void reload().catch(fail) }, 'Cancel'),
    ),
  );
}

/** The lists page: `#/lists` (the first list) or `#/lists/{name}?cursor=`. */
export async function showLists(chosen: string | undefined, cursor: string | undefined, me: Me): Promise<void> {
  const all = await call('listsPeople');
  const lead = me.roles.includes('lead');
  const rs = all.ruleset;
  const name = chosen ?? all.lists[0]?.name;
  const list = all.lists.find((l) => l.name === name);
  if (rs === null || list === undefined) {
    showPage(
      'Lists',
      h('p', { id: 'no-lists' }, rs === null ? 'No ruleset serves: no list.' : `No list ${name ?? ''} is declared.`),
    );
    return;
  }
  const page = await call('listEntries', { params: { name: list.name }, query: { cursor } });
  const reload = (): Promise<void> => showLists(list.name, undefined, me);
  const panel = h('div', { id: 'remove-panel' });
  const removeButton = (v: string): HTMLElement =>
    h(
      'button',
      {
        type: 'button',
        'aria-label': `Remove ${v}`,
        onclick: () => {
          panel.replaceChildren(removeForm(list.name, v, reload));
          document.getElementById('remove-reason')?.focus();
        },
      },
      'Remove',
    );
  showPage(
    'Lists',
    h(
      'p',
      {},
      `The lists ruleset ${rs.name} ${rs.version} declares. ${lead ? 'Each add and removal needs a reason, kept in the audit trail.' : 'Leads add and remove entries; you can read them.'}`,
    ),
    table(
      'Declared lists',
      ['List', 'Event field', 'Entries'],
      all.lists.map((l) => [h('a', { href: `#/lists/${encodeURIComponent(l.name)}` }, l.name), l.key, l.entries]),
      [2],
    ),
    picker(all.lists, list.name),
    h('h2', { id: 'entries-h' }, `Entries of ${list.name}`),
    page.entries.length === 0
      ? h('p', { id: 'no-entries' }, cursor === undefined ? 'No entry.' : 'No more entries.')
      : table(
          `Entries of ${list.name}`,
          lead ? ['Value', 'Expires', 'Action'] : ['Value', 'Expires'],
          page.entries.map((e) => [
            h('code', {}, e.value),
            e.expiresAt === undefined ? 'never' : when(new Date(e.expiresAt).toISOString()),
            ...(lead ? [removeButton(e.value)] : []),
          ]),
        ),
    page.cursor === undefined
      ? null
      : h(
          'a',
          { href: `#/lists/${encodeURIComponent(list.name)}?cursor=${encodeURIComponent(page.cursor)}` },
          'Next entries',
        ),
    lead ? panel : null,
    lead ? addForm(list.name, list.key, reload) : null,
  );
}
