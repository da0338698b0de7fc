/** The rules, drift and serving pages (read-only views over `/api/insights/*`). */
import { api, query } from './api.js';
import { h, pct, showPage, table, when } from './dom.js';
import { lineChart } from './chart.js';

interface RuleStat {
  id: string;
  fired: number;
  labelled: number;
  fraud: number;
  precision: number | null;
  recall: number | null;
}
interface RulesInsight {
  from: string;
  to: string;
  decisions: number;
  labelled: number;
  fraud: number;
  truncated: boolean;
  rules: RuleStat[];
}
interface DriftInsight {
  from: string;
  to: string;
  bucket: string;
  model?: { name: string; version: string };
  threshold: number;
  features: string[];
  points: { start: string; samples: number; score: number | null; features: Record<string, number | null> }[];
  truncated: boolean;
  note?: string;
}

function daysForm(page: string, days: number): HTMLElement {
  return h(
    'form',
    {
      class: 'filters',
      onsubmit: (e: Event) => {
        e.preventDefault();
        location.hash = `#/${page}?days=${(document.getElementById('days') as HTMLSelectElement).value}`;
      },
    },
    h(
      'label',
      {},
      'Window',
      h(
        'select',
        { id: 'days', name: 'days' },
        [1, 2, 7, 14, 30].map((d) => h('option', { value: d, selected: d === days }, `${d} day${d === 1 ? '' : 's'}`)),
      ),
    ),
    h('button', { type: 'submit' }, 'Show'),
  );
}

/** Each rule's hits, precision and recall over the window. */
export async function showRules(days: number): Promise<void> {
  const r = await api<RulesInsight>(`insights/rules${query({ days: String(days) })}`);
  showPage(
    'Rules',
    daysForm('rules', days),
    h(
      'p',
      { id: 'rules-summary' },
      `${r.decisions} decisions from ${when(r.from)} to ${when(r.to)}; ${r.labelled} labelled, ${r.fraud} of them fraud.`,
      r.truncated ? ' Only the newest decisions were read.' : '',
    ),
    h(
      'p',
      {},
      'Precision: the share of a rule’s labelled hits that are fraud. Recall: the share of labelled fraud the rule caught.',
    ),
    table(
      'Rules over the window',
      ['Rule', 'Hits', 'Labelled hits', 'Fraud hits', 'Precision', 'Recall'],
      r.rules.map((s) => [h('code', {}, s.id), s.fired, s.labelled, s.fraud, pct(s.precision), pct(s.recall)]),
      [1, 2, 3, 4, 5],
    ),
  );
}

/** The PSI of each feature and of the score over time, with the alert threshold. */
export async function showDrift(days: number): Promise<void> {
  const d = await api<DriftInsight>(`insights/drift${query({ days: String(days) })}`);
  const series = [
    { name: 'score', values: d.points.map((p) => p.score) },
    ...d.features.map((f) => ({ name: f, values: d.points.map((p) => p.features[f] ?? null) })),
  ];
  const fmt = (v: number | null): HTMLElement | string =>
    v === null ? '—' : v > d.threshold ? h('span', { class: 'above' }, `${v.toFixed(3)} (above)`) : v.toFixed(3);
  showPage(
    'Drift',
    daysForm('drift', days),
    h(
      'p',
      { id: 'drift-summary' },
      d.model === undefined
        ? (d.note ?? 'No model.')
        : `Model ${d.model.name} ${d.model.version}, one point per ${d.bucket}; the alert fires above PSI ${d.threshold}.`,
      d.note !== undefined && d.model !== undefined ? ` ${d.note}` : '',
    ),
    d.points.length === 0
      ? null
      : lineChart(
          series,
          d.points.map((p) => p.start),
          d.threshold,
          `PSI per ${d.bucket}`,
        ),
    d.points.length === 0
      ? null
      : table(
          'PSI per bucket',
          ['From', 'Payments', 'Score', ...d.features],
          d.points.map((p) => [
            when(p.start),
            p.samples,
            fmt(p.score),
            ...d.features.map((f) => fmt(p.features[f] ?? null)),
          ]),
          [1],
        ),
  );
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** What serves, from a model's or a ruleset's status: serving version, active, candidate with its shares. */
export function servingSummary(status: unknown): { name: string; serving: string; candidate: string } {
  const o = obj(status);
  const pointer = obj(o['pointer']);
  const serving =
    str(o['serving']) ??
    str(obj(o['thisInstance'])['serving']) ??
    str(obj(o['active'])['version']) ??
    str(pointer['active']) ??
    '—';
  const c = obj(o['candidate'] ?? pointer['traffic'] ?? o['traffic']);
  const version = str(c['version']) ?? str(c['candidate']);
  const candidate =
    version === undefined
      ? 'none'
      : `${version} (canary ${String(c['canaryPercent'] ?? 0)} %, shadow ${String(c['shadowPercent'] ?? 0)} %)`;
  return { name: str(o['name']) ?? '—', serving, candidate };
}

function versions(label: string, list: readonly unknown[]): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': `${label}-h` },
    h('h2', { id: `${label}-h` }, label),
    list.length === 0
      ? h('p', {}, 'None configured.')
      : [
          table(
            label,
            ['Name', 'Serving here', 'Candidate'],
            list.map((s) => {
              const v = servingSummary(s);
              return [v.name, v.serving, v.candidate];
            }),
          ),
          h(
            'details',
            {},
            h('summary', {}, `${label}: the full status`),
            list.map((s) => h('pre', {}, JSON.stringify(s, null, 2))),
          ),
        ],
  );
}

/** Model and ruleset versions, canaries and shadows. */
export async function showServing(): Promise<void> {
  const s = await api<{ models: unknown[]; rulesets: unknown[] }>('insights/serving');
  showPage('Serving', versions('Models', s.models), versions('Rulesets', s.rulesets));
}
