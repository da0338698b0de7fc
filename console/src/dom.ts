/** A small element builder: text goes in as text nodes (never parsed as HTML), so a payment's fields cannot inject markup. */

export type Child = Node | string | number | null | undefined | false | readonly Child[];
export type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** Creates `<tag>` with attributes (`on…` functions become listeners; `false`/`null` are left out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c as readonly Child[]);
    else el.appendChild(typeof c === 'object' ? (c as Node) : document.createTextNode(String(c)));
  }
}

/** Replaces the content of `main` with a page: its `<h1>` first, and moves the focus there (screen readers hear the new page). */
export function showPage(title: string, ...content: Child[]): void {
  const main = document.getElementById('main') as HTMLElement;
  main.replaceChildren();
  append(main, [h('h1', {}, title), ...content]);
  document.title = `${title} · Case console`;
  main.focus();
}

/** Says something in the live region (polite): a success, or an error when `error`. */
export function say(text: string, error = false): void {
  const s = document.getElementById('status') as HTMLElement;
  s.textContent = text;
  s.classList.toggle('error', error);
}

/** A table: header cells, then rows of cells; numeric columns (by index) right-aligned. */
export function table(
  caption: string,
  head: readonly string[],
  rows: readonly Child[][],
  numeric: readonly number[] = [],
): HTMLTableElement {
  const cls = (i: number): string | undefined => (numeric.includes(i) ? 'num' : undefined);
  return h(
    'table',
    {},
    h('caption', { class: 'visually-hidden' }, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.map((t, i) => h('th', { scope: 'col', class: cls(i) }, t)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((r) =>
        h(
          'tr',
          {},
          r.map((c, i) => h('td', { class: cls(i) }, c)),
        ),
      ),
    ),
  );
}

/** A number for people: `null` as an em dash, ratios as percentages. */
export function pct(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : `${(v * 100).toFixed(1)} %`;
}

/** A date-time in the reader's locale with its time zone (`12/6/2026, 9:05:00 AM UTC`), or an em dash. */
export function when(iso: string | undefined): string {
  return iso === undefined ? '—' : new Date(iso).toLocaleString(undefined, { timeZoneName: 'short' });
}

/** Whether a key event comes from a place where typing must not trigger a shortcut. */
export function typing(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return e.ctrlKey || e.metaKey || e.altKey || (t !== null && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}
