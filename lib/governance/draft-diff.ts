/**
 * What a draft changes against the serving version, per rule: added, removed, or changed with the lines that
 * differ (a rule as lines: one per field, its `when` expression one line per line of its text), and the other
 * fields of the document that differ (`lists`, `profiles`, `golden`…). A small longest-common-subsequence diff,
 * bounded: beyond {@link MAX_DIFF_LINES} lines a side, what is between the common head and tail is shown as
 * removed then added. Pure.
 * @module
 */

/** One line of a diff: kept, removed (`del`) or added (`add`). */
export interface DiffLine {
  readonly op: 'same' | 'del' | 'add';
  readonly text: string;
}

/** A rule the draft adds, removes or changes, with its lines. */
export interface RuleChange {
  readonly id: string;
  readonly change: 'added' | 'removed' | 'changed';
  readonly lines: readonly DiffLine[];
}

/** A top-level field other than `rules` and `version` that differs, with its lines. */
export interface FieldChange {
  readonly field: string;
  readonly lines: readonly DiffLine[];
}

/** The diff of a draft against the serving version. */
export interface DraftDiff {
  readonly rules: readonly RuleChange[];
  /** Rules neither added, removed nor changed. */
  readonly unchanged: number;
  readonly fields: readonly FieldChange[];
}

/** Most lines a side the LCS compares (the table is their product). */
export const MAX_DIFF_LINES = 2000;

/**
 * The line diff of `a` into `b`: its `same` and `del` lines are `a`, its `same` and `add` lines are `b`, and its
 * `same` lines are a longest common subsequence (within {@link MAX_DIFF_LINES}).
 */
export function diffLines(a: readonly string[], b: readonly string[]): DiffLine[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const same = (xs: readonly string[]): DiffLine[] => xs.map((text) => ({ op: 'same', text }));
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const middle =
    x.length > MAX_DIFF_LINES || y.length > MAX_DIFF_LINES
      ? [...x.map((text): DiffLine => ({ op: 'del', text })), ...y.map((text): DiffLine => ({ op: 'add', text }))]
      : lcs(x, y);
  return [...same(a.slice(0, head)), ...middle, ...same(a.slice(a.length - tail))];
}

/** The LCS diff by dynamic programming: `len[i][j]` is the LCS length of `x[i..]` and `y[j..]`. */
function lcs(x: readonly string[], y: readonly string[]): DiffLine[] {
  const w = y.length + 1;
  const len = new Uint32Array((x.length + 1) * w);
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--)
      len[i * w + j] =
        x[i] === y[j]
          ? (len[(i + 1) * w + j + 1] ?? 0) + 1
          : Math.max(len[(i + 1) * w + j] ?? 0, len[i * w + j + 1] ?? 0);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      out.push({ op: 'same', text: x[i] as string });
      i++;
      j++;
    } else if (j >= y.length || (i < x.length && (len[(i + 1) * w + j] ?? 0) >= (len[i * w + j + 1] ?? 0))) {
      out.push({ op: 'del', text: x[i] as string });
      i++;
    } else {
      out.push({ op: 'add', text: y[j] as string });
      j++;
    }
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const jsonLines = (v: unknown): string[] =>
  (JSON.stringify(canonical(v), null, 2) ?? '').split('\n').filter((l) => l !== '');
/** A document's own field (never one it inherits, such as `valueOf`). */
const own = (o: Record<string, unknown>, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);

/** The fields a rule shows first, in this order; the others follow by name. */
const RULE_ORDER = ['id', 'description', 'when', 'action'];

/** `v` with its objects' keys sorted (stored documents, PostgreSQL's jsonb, do not keep the order). */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (!isRecord(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, canonical(v[k])]),
  );
}

const rank = (k: string): number => (RULE_ORDER.includes(k) ? RULE_ORDER.indexOf(k) : RULE_ORDER.length);

/** A rule as lines: `field: value` (JSON, keys sorted), its `when` one line per line of the expression. */
export function ruleLines(rule: unknown): string[] {
  if (!isRecord(rule)) return [JSON.stringify(canonical(rule)) ?? ''];
  const keys = Object.keys(rule).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const out: string[] = [];
  for (const k of keys) {
    const v = rule[k];
    if (k === 'when' && typeof v === 'string') {
      const [first = '', ...rest] = v.split('\n');
      out.push(`when: ${first}`, ...rest.map((l) => `      ${l}`));
    } else out.push(`${k}: ${JSON.stringify(canonical(v)) ?? ''}`);
  }
  return out;
}

const idOf = (rule: unknown, i: number): string =>
  isRecord(rule) && typeof rule['id'] === 'string' ? rule['id'] : `#${i + 1}`;

function rulesOf(doc: unknown): Map<string, unknown> {
  const rules = isRecord(doc) && Array.isArray(own(doc, 'rules')) ? (doc['rules'] as unknown[]) : [];
  return new Map(rules.map((r, i) => [idOf(r, i), r] as const));
}

/** The draft `draft` against the serving document `serving`: rules in the draft's order, then the removed ones. */
export function diffDocuments(serving: unknown, draft: unknown): DraftDiff {
  const before = rulesOf(serving);
  const after = rulesOf(draft);
  const rules: RuleChange[] = [];
  let unchanged = 0;
  for (const [id, rule] of after) {
    const old = before.get(id);
    if (old === undefined) rules.push({ id, change: 'added', lines: diffLines([], ruleLines(rule)) });
    else if (JSON.stringify(canonical(old)) === JSON.stringify(canonical(rule))) unchanged++;
    else rules.push({ id, change: 'changed', lines: diffLines(ruleLines(old), ruleLines(rule)) });
  }
  for (const [id, rule] of before)
    if (!after.has(id)) rules.push({ id, change: 'removed', lines: diffLines(ruleLines(rule), []) });
  const a = isRecord(serving) ? serving : {};
  const b = isRecord(draft) ? draft : {};
  const fields: FieldChange[] = [];
  for (const field of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (field === 'rules' || field === 'version') continue;
    const x = jsonLines(own(a, field));
    const y = jsonLines(own(b, field));
    if (x.join('\n') !== y.join('\n')) fields.push({ field, lines: diffLines(x, y) });
  }
  return { rules, unchanged, fields };
}
