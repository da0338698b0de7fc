/**
 * The case page's "Recent payments": the user's recent decided payments (approved, declined or held for review),
 * newest first, the case's own marked, as the case answer gives them (`recentPayments`); why the table is empty, or
 * that they could not be read.
 */
import { h, table, when } from './dom.js';
import { money } from './queue.js';
import type { CaseDetail } from './types.js';

const DECISION: Readonly<Record<string, string>> = {
  approve: 'Approved',
  decline: 'Declined',
  review: 'Held for review',
};

/** A decision in words (`Approved`, `Declined`, `Held for review`). */
export function decisionWords(d: string): string {
  return DECISION[d] ?? d;
}

/** The section, or nothing when the answer has no recent payments at all (the service does not keep them). */
export function recentPaymentsSection(d: CaseDetail): HTMLElement | null {
  const days = d.recentPaymentsKeptDays;
  if (days === undefined) return null;
  const own = d.case.transactionId;
  const payments = d.recentPayments;
  const others = payments?.filter((p) => p.transactionId !== own) ?? [];
  return h(
    'section',
    { 'aria-labelledby': 'recent-h' },
    h('h2', { id: 'recent-h' }, 'Recent payments'),
    h(
      'p',
      { class: 'help' },
      `This user's payments of the last ${days} days as they were decided (approved, declined or held for review), ` +
        'newest first, this case\u2019s own payment marked.',
    ),
    payments === undefined
      ? h('p', { id: 'recent-none' }, 'The recent payments could not be read just now; reload the case to try again.')
      : others.length === 0
        ? h('p', { id: 'recent-none' }, `No other payments by this user in the last ${days} days.`)
        : table(
            'Recent payments of this user',
            ['Payment', 'Decided', 'Amount', 'Merchant', 'Decision', 'Score', 'Rules fired'],
            payments.map((p) => [
              p.transactionId === own ? `${p.transactionId} (this case)` : p.transactionId,
              when(p.decidedAt),
              money({ amount: p.amount, currency: p.currency }),
              p.merchantId,
              decisionWords(p.decision),
              p.score === null ? '—' : p.score.toFixed(3),
              p.rules.length === 0 ? 'None' : p.rules.join(', '),
            ]),
            [2, 5],
          ),
  );
}
