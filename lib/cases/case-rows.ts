/**
 * How a case is a row of `cases` and back: the columns read, the columns and casts of an insert, the row as a
 * {@link Case} (lib/cases/sql-case-store.ts runs the SQL).
 * @module
 */
import type { PaymentEvent } from '../domain/payment-event';
import type { EscalationInfo } from '../scoring/escalation-info';
import type { Reason } from '../scoring/decision';
import type { CaseRoute } from './case-queues';
import type { Case, CaseState, NewCase, Verdict } from './case-store';

/** Columns of a case row, as {@link toCase} reads them. */
export const COLS = `id::text AS id, transaction_id, payment, score, decision, reasons, rules, rule_errors, model_name,
  model_version, ruleset_name, ruleset_version, profile_id, escalation, decided_at, opened_at, state, assignee,
  assigned_at, verdict, verdict_reason, closed_at, closed_by, queue, sla_due_at`;

/** Parameters per inserted case. */
export const INSERT_COLS = [
  'transaction_id',
  'user_id',
  'merchant_id',
  'payment',
  'score',
  'decision',
  'reasons',
  'rules',
  'rule_ids',
  'rule_errors',
  'model_name',
  'model_version',
  'ruleset_name',
  'ruleset_version',
  'profile_id',
  'escalation',
  'decided_at',
  'opened_at',
  'queue',
  'sla_due_at',
  'signals',
] as const;
export const CASTS: Partial<Record<(typeof INSERT_COLS)[number], string>> = {
  payment: '::jsonb',
  reasons: '::jsonb',
  rules: '::jsonb',
  rule_ids: '::text[]',
  rule_errors: '::jsonb',
  escalation: '::jsonb',
  signals: '::jsonb',
  decided_at: '::timestamptz',
  opened_at: '::timestamptz',
  sla_due_at: '::timestamptz',
  score: '::float8',
};

export type Row = Record<string, unknown>;

export function iso(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  return (v instanceof Date ? v : new Date(String(v))).toISOString();
}

function str(v: unknown): string | undefined {
  return v === null || v === undefined ? undefined : String(v);
}

/** A row of {@link COLS} as a {@link Case}. */
export function toCase(r: Row): Case {
  const rulesetName = str(r['ruleset_name']);
  const rulesetVersion = str(r['ruleset_version']);
  const profile = str(r['profile_id']);
  const opt = {
    assignee: str(r['assignee']),
    assignedAt: iso(r['assigned_at']),
    verdict: str(r['verdict']) as Verdict | undefined,
    verdictReason: str(r['verdict_reason']),
    closedAt: iso(r['closed_at']),
    closedBy: str(r['closed_by']),
    queue: str(r['queue']),
    slaDueAt: iso(r['sla_due_at']),
  };
  return {
    id: String(r['id']),
    transactionId: String(r['transaction_id']),
    payment: r['payment'] as PaymentEvent,
    score: r['score'] === null ? null : Number(r['score']),
    decision: String(r['decision']),
    reasons: r['reasons'] as Reason[],
    rules: r['rules'] as { id: string; action: string }[],
    ruleErrors: r['rule_errors'] as string[],
    model: { name: String(r['model_name']), version: String(r['model_version']) },
    ...(rulesetName !== undefined && rulesetVersion !== undefined
      ? { ruleset: { name: rulesetName, version: rulesetVersion } }
      : {}),
    ...(profile === undefined ? {} : { profile: { id: profile } }),
    ...(r['escalation'] === null || r['escalation'] === undefined
      ? {}
      : { escalation: r['escalation'] as EscalationInfo }),
    decidedAt: iso(r['decided_at']) ?? '',
    openedAt: iso(r['opened_at']) ?? '',
    state: String(r['state']) as CaseState,
    ...(Object.fromEntries(Object.entries(opt).filter(([, v]) => v !== undefined)) as Partial<Case>),
  };
}

/** The values of {@link INSERT_COLS} for `c`, routed to `route` (its SLA deadline counts from the decision). */
export function insertValues(c: NewCase, openedAt: string, route: CaseRoute): unknown[] {
  return [
    c.transactionId,
    c.payment.userId,
    c.payment.merchantId,
    JSON.stringify(c.payment),
    c.score,
    c.decision,
    JSON.stringify(c.reasons),
    JSON.stringify(c.rules),
    c.rules.map((r) => r.id),
    JSON.stringify(c.ruleErrors),
    c.model.name,
    c.model.version,
    c.ruleset?.name ?? null,
    c.ruleset?.version ?? null,
    c.profile?.id ?? null,
    c.escalation === undefined ? null : JSON.stringify(c.escalation),
    new Date(c.decidedAt).toISOString(),
    openedAt,
    route.queue,
    new Date(c.decidedAt + route.slaHours * 3_600_000).toISOString(),
    c.signals === undefined ? null : JSON.stringify(c.signals),
  ];
}
