/** The rules and drift pages (read-only views over `/api/insights/*`). */
import { call } from './api.js';
import type { DriftInsight } from './api-contract.js';
import { h, pct, showPage, table, when } from './dom.js';
import { lineChart } from './chart.js';

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
  const r = await call('insightsRules', { query: { days: String(days) } });
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

/** Why the chart has nothing to draw: no model, no bins, no payment, or too few per bucket. */
function emptyDrift(d: DriftInsight, min: number): string | undefined {
  if (d.note !== undefined) return d.note;
  const most = Math.max(0, ...d.points.map((p) => p.samples));
  const total = d.points.reduce((n, p) => n + p.samples, 0);
  if (d.points.some((p) => p.score !== null)) return undefined;
  if (total === 0)
    return `No payment scored by this model version was logged in the window: the chart fills as payments are decided.`;
  return `No ${d.bucket} has the ${min} scored payments a PSI needs (the most in one ${d.bucket}: ${most}; ${total} in the window). Choose a longer window (daily points) or wait for more payments.`;
}

/** The PSI of each feature and of the score over time, with the alert threshold. */
export async function showDrift(days: number): Promise<void> {
  const d = await call('insightsDrift', { query: { days: String(days) } });
  const min = d.minSamples ?? 100;
  const series = [
    { name: 'score', values: d.points.map((p) => p.score) },
    ...d.features.map((f) => ({ name: f, values: d.points.map((p) => p.features[f] ?? null) })),
  ];
  const fmt = (v: number | null): HTMLElement | string =>
    v === null ? '—' : v > d.threshold ? h('span', { class: 'above' }, `${v.toFixed(3)} (above)`) : v.toFixed(3);
  const empty = emptyDrift(d, min);
  const rows = d.points.filter((p) => p.samples > 0);
  showPage(
    'Drift',
    daysForm('drift', days),
    h(
      'p',
      { id: 'drift-summary' },
      d.model === undefined
        ? (d.note ?? 'No model.')
        : `Model ${d.model.name} ${d.model.version}, one point per ${d.bucket}; the alert fires above PSI ${d.threshold}. A ${d.bucket} with fewer than ${min} scored payments has no value.`,
      d.truncated ? ' Only the newest decisions were read.' : '',
    ),
    empty === undefined
      ? lineChart(
          series,
          d.points.map((p) => p.start),
          d.threshold,
          `PSI per ${d.bucket}`,
        )
      : h('p', { id: 'drift-empty', class: 'empty' }, empty),
    rows.length === 0
      ? null
      : h(
          'div',
          { class: 'table-scroll', role: 'region', 'aria-label': 'PSI per bucket (scrolls sideways)', tabindex: 0 },
          table(
            'PSI per bucket',
            ['From', 'Payments', 'Score', ...d.features],
            rows.map((p) => [
              when(p.start),
              p.samples < min ? `${p.samples} (fewer than ${min})` : p.samples,
              fmt(p.score),
              ...d.features.map((f) => fmt(p.features[f] ?? null)),
            ]),
            [1],
          ),
        ),
    rows.length === 0 || rows.length === d.points.length
      ? null
      : h('p', {}, `The ${d.points.length - rows.length} ${d.bucket}s without a payment are left out of the table.`),
  );
}
