/**
 * The case screen's "Signals" (each signal's name, value and definition, the ones that mattered first) and "Recent
 * activity" (the counts of the payment's user, card, device, IP address and email) sections (docs/console.md).
 */
import { plain } from './case-reasons.js';
import { h, table, type Child } from './dom.js';
import type { ActivityGroup, CaseDetail, CaseSignal, MatteredSignal, SignalsView } from './types.js';

/** A signal's value for people: whole numbers as they are, others to 3 decimals, none as an em dash. */
function shown(v: number | null): string {
  if (v === null) return '—';
  return Number.isInteger(v) ? String(v) : v.toFixed(3);
}

/** Why a signal mattered, in words. */
function why(m: MatteredSignal | undefined): string {
  if (m === undefined) return '—';
  const parts = m.rules.map((r) => `rule ${r}`);
  if (m.model) parts.push("model's top reasons");
  return parts.join('; ');
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

function signalsTable(s: SignalsView): HTMLTableElement {
  const mattered = new Map(s.mattered.map((m) => [m.name, m] as const));
  const rest = s.all.filter((x) => !mattered.has(x.name));
  const rows = [...s.mattered, ...rest].map((x: CaseSignal) => [
    h('code', {}, x.name),
    shown(x.value),
    plain(x.name, x.definition).meaning,
    why(mattered.get(x.name)),
  ]);
  const t = table(
    `Signals of signals ${s.version.name} ${s.version.version}, the ones that mattered first`,
    ['Signal', 'Value', 'What it means', 'Why it mattered'],
    rows,
    [1],
  );
  t.id = 'signals-table';
  return t;
}

/** The "Signals" section: the empty state says why there are none. */
function signalsSection(d: CaseDetail): HTMLElement {
  const s = d.signals;
  const body: Child[] =
    s === undefined
      ? [h('p', { id: 'signals-empty' }, 'This payment was scored before signals were recorded.')]
      : [
          h(
            'p',
            { id: 'signals-summary' },
            `Signals ${s.version.name} ${s.version.version}. `,
            s.mattered.length === 0
              ? 'None of them was read by a rule that fired or named in the model’s top reasons.'
              : `${s.mattered.length} mattered (read by a rule that fired, or in the model’s top reasons); they come first.`,
            s.omitted > 0 ? ` ${s.omitted} other signals were left out to keep the case small.` : '',
          ),
          signalsTable(s),
        ];
  return h('section', { 'aria-labelledby': 'signals-h' }, h('h2', { id: 'signals-h' }, 'Signals'), body);
}

/** One group of the recent activity: its counts, or why there are none. */
function activityGroup(g: ActivityGroup, s: SignalsView): HTMLElement {
  const id = `activity-${g.field}`;
  const title = capital(g.label);
  let body: Child;
  if (g.aggregates.length === 0)
    body = h('p', {}, `No aggregate is keyed by the ${g.label} in signals ${s.version.name} ${s.version.version}.`);
  else if (!g.present) body = h('p', {}, `The payment had no ${g.label}: nothing was counted for it.`);
  else
    body = table(
      `Recent activity of the ${g.label}`,
      ['Signal', 'Value', 'Window', 'What it means'],
      g.aggregates.map((a) => [
        h('code', {}, a.name),
        shown(a.value),
        a.window ?? '—',
        plain(a.name, a.definition).meaning,
      ]),
      [1],
    );
  return h('section', { id, 'aria-labelledby': `${id}-h` }, h('h3', { id: `${id}-h` }, title), body);
}

/** The "Recent activity" section, grouped by user, card, device, IP address and email. */
function activitySection(d: CaseDetail): HTMLElement {
  const s = d.signals;
  const groups = d.activity ?? [];
  const body: Child =
    s === undefined
      ? h('p', { id: 'activity-empty' }, 'This payment was scored before signals were recorded.')
      : groups.map((g) => activityGroup(g, s));
  return h(
    'section',
    { 'aria-labelledby': 'activity-h', class: 'activity' },
    h('h2', { id: 'activity-h' }, 'Recent activity'),
    s === undefined
      ? null
      : h('p', {}, 'Counts over each window up to and including this payment, when it was decided.'),
    body,
  );
}

/** The two sections of a case's signals. */
export function signalSections(d: CaseDetail): HTMLElement[] {
  return [signalsSection(d), activitySection(d)];
}
