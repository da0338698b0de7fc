/**
 * A draft's changes against the serving version, as the reviewing lead reads them: one section per rule added,
 * removed or changed, its lines marked (removed lines in `<del>`, added in `<ins>`, each also prefixed `-` / `+`
 * for readers that do not style them); unchanged rules counted, not shown.
 */
import { h } from './dom.js';
import type { DiffLine, DraftDiff } from './draft-types.js';

const MARK: Readonly<Record<DiffLine['op'], string>> = { same: '  ', del: '- ', add: '+ ' };

function lines(label: string, ls: readonly DiffLine[]): HTMLElement {
  return h(
    'pre',
    { class: 'diff', 'aria-label': label, tabindex: 0 },
    ls.map((l) => {
      const text = `${MARK[l.op]}${l.text}\n`;
      return l.op === 'del' ? h('del', {}, text) : l.op === 'add' ? h('ins', {}, text) : text;
    }),
  );
}

const WORD = { added: 'added', removed: 'removed', changed: 'changed' } as const;

/** The diff section of the draft page. */
export function diffSection(version: string, d: DraftDiff): HTMLElement {
  const n = d.rules.length;
  return h(
    'section',
    { 'aria-labelledby': 'diff-h', id: 'draft-diff' },
    h('h2', { id: 'diff-h' }, `Changes against serving ${d.serving}`),
    h(
      'p',
      { id: 'diff-summary' },
      n === 0 && d.fields.length === 0
        ? `Draft ${version} changes nothing against ${d.serving}.`
        : `${n} rule${n === 1 ? '' : 's'} changed (${(['added', 'removed', 'changed'] as const)
            .map((c) => `${d.rules.filter((r) => r.change === c).length} ${WORD[c]}`)
            .join(
              ', ',
            )}), ${d.unchanged} unchanged${d.fields.length === 0 ? '' : `; other fields: ${d.fields.map((f) => f.field).join(', ')}`}.`,
    ),
    d.rules.map((r) =>
      h(
        'section',
        { class: `rule-change ${r.change}`, 'aria-labelledby': `diff-${r.id}` },
        h('h3', { id: `diff-${r.id}` }, `Rule ${r.id}: ${WORD[r.change]}`),
        lines(`Rule ${r.id}, ${WORD[r.change]}`, r.lines),
      ),
    ),
    d.fields.map((f) =>
      h(
        'section',
        { class: 'rule-change changed', 'aria-labelledby': `diff-field-${f.field}` },
        h('h3', { id: `diff-field-${f.field}` }, `Field ${f.field}: changed`),
        lines(`Field ${f.field}`, f.lines),
      ),
    ),
  );
}
