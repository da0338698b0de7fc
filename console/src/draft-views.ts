/**
 * Rule changes (docs/governance.md): the drafts of the serving ruleset, and a new draft edited with its compile
 * errors shown against the rule and the column. Analysts read the drafts; only leads see "New draft".
 */
import { ApiError, call, type FieldError } from './api.js';
import { h, say, showPage, table, when } from './dom.js';
import { serving } from './draft-types.js';
import type { Me } from './types.js';

/** The drafts of the serving ruleset, and "New draft" for leads. */
export async function showDrafts(me: Me): Promise<void> {
  const rs = await serving();
  const { drafts } = await call('rulesetDrafts', { params: { name: rs.name } });
  const lead = me.roles.includes('lead');
  showPage(
    'Rule changes',
    h('p', {}, `Ruleset ${rs.name}, serving ${rs.version}. A draft serves only once another lead has approved it.`),
    lead
      ? h('p', {}, h('a', { href: '#/drafts/new', id: 'new-draft' }, 'New draft'))
      : h('p', { id: 'drafts-read-only' }, 'Leads draft, approve and promote rule changes; you can read them.'),
    drafts.length === 0
      ? h('p', { id: 'no-drafts' }, 'No draft yet.')
      : table(
          'Drafts',
          ['Version', 'State', 'Author', 'Approver', 'Updated'],
          drafts.map((d) => [
            h('a', { href: `#/draft/${encodeURIComponent(d.version)}` }, d.version),
            d.state === 'approved' && d.version === rs.version ? 'approved, serving' : d.state,
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

/** The errors of a refused draft, each against its rule, column and line. */
function errorItems(text: string, e: ApiError): HTMLElement[] {
  const fields = e.fields.length > 0 ? e.fields : [{ path: '', message: e.message }];
  return fields.map((f) => {
    const line = lineOf(text, f);
    const where = [
      f.rule === undefined ? undefined : `rule ${f.rule}`,
      f.column === undefined ? undefined : `column ${f.column}`,
      line === undefined ? undefined : `line ${line}`,
    ].filter(Boolean);
    return h('li', { class: 'error-item' }, where.length > 0 ? `${where.join(', ')}: ` : '', f.message || f.path);
  });
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
      const d = await call('rulesetDraftCreate', { params: { name: rs.name }, body: doc as Record<string, unknown> });
      say(`Draft ${d.version} saved.`);
      location.hash = `#/draft/${encodeURIComponent(d.version)}`;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      editor.setAttribute('aria-invalid', 'true');
      errors.append(...errorItems(editor.value, e));
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
