/** A draft's backtest as the draft page shows it: where it stands, or its report. */
import { h, pct, table, when } from './dom.js';
import type { BacktestReport, DraftBacktest } from './draft-types.js';

/** One line on the lists replayed with today's entries, or not replayed; none when every list was as recorded. */
function listsLine(l: BacktestReport['lists']): HTMLElement | null {
  if (l === undefined || (l.currentEntries.length === 0 && l.notReplayed.length === 0)) return null;
  const old = l.recordsWithoutMemberships;
  const parts = [
    l.currentEntries.length === 0
      ? ''
      : `Lists replayed with today's entries, not as the payments saw them: ${l.currentEntries.join(', ')}${old > 0 ? ` (${old} decisions were logged before list memberships were)` : ''}.`,
    l.notReplayed.length === 0
      ? ''
      : `Not replayed (the logged decisions did not consult them; their rules count as not firing): ${l.notReplayed.map((n) => n.list).join(', ')}.`,
  ];
  return h('p', { id: 'backtest-lists' }, parts.filter((x) => x !== '').join(' '));
}

/** The backtest: running (with its progress), failed, or its report. */
export function backtestResult(b: DraftBacktest): HTMLElement {
  if (b.state === 'running')
    return h(
      'p',
      { id: 'backtest-state' },
      `Running: ${b.progress?.replayed ?? 0} of ${b.progress?.total ?? '?'} decisions replayed.`,
    );
  if (b.state === 'failed' || b.result === undefined)
    return h('p', { id: 'backtest-state' }, `Failed: ${b.error ?? 'no result'}.`);
  const r = b.result;
  return h(
    'div',
    { id: 'backtest-result' },
    h(
      'p',
      { id: 'backtest-summary' },
      `${r.decisions} decisions from ${when(b.from)} to ${when(b.to)}, ${r.labelled} labelled. Labelled fraud now caught: ${r.fraudNowCaught}. Labelled good now blocked: ${r.goodNowBlocked}, now held for review: ${r.goodNowHeld}. Review queue: ${r.reviewQueue.current} → ${r.reviewQueue.candidate} (${r.reviewQueue.growthPerDay >= 0 ? '+' : ''}${r.reviewQueue.growthPerDay} a day).`,
    ),
    listsLine(r.lists),
    table(
      'Decisions that change',
      ['Change', 'Payments'],
      Object.entries(r.changes).map(([k, v]) => [k, v]),
      [1],
    ),
    table(
      'Rules in the window',
      ['Rule', 'Hits', 'Labelled', 'Fraud', 'Precision', 'Recall'],
      Object.entries(r.rules).map(([id, x]) => [
        h('code', {}, id),
        x.hits,
        x.labelled,
        x.fraud,
        pct(x.precision),
        pct(x.recall),
      ]),
      [1, 2, 3, 4, 5],
    ),
    r.firingTogether.length === 0
      ? null
      : table(
          'Rules that fire together',
          ['Rules', 'Payments'],
          r.firingTogether.map((p) => [p.rules.join(' + '), p.count]),
          [1],
        ),
  );
}
