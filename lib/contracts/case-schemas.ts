/**
 * The case API's answers (`/api/cases`, `/api/me`; docs/cases.md): a case, its detail, pages, analytics, who is acting,
 * the label a verdict writes. The contracts of lib/contracts/cases.ts answer with them.
 * @module
 */
import { z } from 'zod';
import { OpenObject, Reason, VersionRef } from './common';

/** A case's verdict. */
export const Verdict = z.enum(['fraud', 'legit']).meta({ id: 'Verdict', description: "A case's verdict." });

/** The payment event as the merchant sent it. */
export const Payment = OpenObject.meta({ id: 'Payment', description: 'The payment event as the merchant sent it.' });

export const Case = z
  .strictObject({
    id: z.string(),
    transactionId: z.string(),
    payment: Payment,
    score: z.number().nullable(),
    decision: z.string(),
    reasons: z.array(Reason),
    rules: z.array(z.strictObject({ id: z.string(), action: z.string() })),
    ruleErrors: z.array(z.string()),
    model: VersionRef,
    ruleset: VersionRef.optional(),
    profile: z.strictObject({ id: z.string() }).optional(),
    escalation: OpenObject.optional().describe("The LLM review's outcome (docs/escalation.md)."),
    decidedAt: z.string(),
    openedAt: z.string(),
    state: z.enum(['open', 'assigned', 'closed']),
    assignee: z.string().optional(),
    assignedAt: z.string().optional(),
    verdict: Verdict.optional(),
    verdictReason: z.string().optional(),
    closedAt: z.string().optional(),
    closedBy: z.string().optional(),
    queue: z.string().optional().describe('The queue it was routed to.'),
    slaDueAt: z.string().optional().describe("When its queue's SLA runs out."),
    ageSeconds: z.number().optional().describe('Seconds since the decision (to the close, once closed).'),
    slaBreached: z.boolean().optional().describe('Whether the SLA ran out first.'),
  })
  .meta({ id: 'Case', description: 'A review case: the decided payment, its state and its verdict.' });

export const CaseEvent = z
  .strictObject({
    at: z.string(),
    actor: z.string(),
    action: z.string().describe('`opened`, `assigned`, `note`, `verdict`, `reassigned`.'),
    detail: OpenObject.optional(),
  })
  .meta({ id: 'CaseEvent', description: "One entry of a case's history." });

const signalFields = {
  name: z.string(),
  value: z.number().nullable(),
  definition: z.string(),
  kind: z.enum(['aggregate', 'feature']),
  key: z.array(z.string()).optional(),
  op: z.string().optional(),
  window: z.string().optional(),
};

export const CaseSignal = z
  .strictObject(signalFields)
  .meta({ id: 'CaseSignal', description: 'One signal of a case: its value when the payment was decided.' });

export const MatteredSignal = z
  .strictObject({ ...signalFields, rules: z.array(z.string()), model: z.boolean() })
  .meta({ id: 'MatteredSignal', description: 'A signal that mattered: the rules that read it, the model naming it.' });

export const SignalsView = z
  .strictObject({
    version: VersionRef,
    mattered: z.array(MatteredSignal),
    all: z.array(CaseSignal),
    omitted: z.number().describe('Signals the case left out to stay small (never one that mattered).'),
  })
  .meta({ id: 'SignalsView', description: "A case's signals, the ones that mattered first." });

export const ActivityGroup = z
  .strictObject({ field: z.string(), label: z.string(), present: z.boolean(), aggregates: z.array(CaseSignal) })
  .meta({ id: 'ActivityGroup', description: "The recent activity of one of the payment's fields." });

export const CaseListOption = z
  .strictObject({ name: z.string(), key: z.string().describe('The payment field the list is keyed by.') })
  .meta({ id: 'CaseListOption', description: "A list a lead may add the case's value to." });

export const RecentPayment = z
  .strictObject({
    transactionId: z.string(),
    decidedAt: z.string().describe('When it was decided (ISO 8601 UTC).'),
    amount: z.number(),
    currency: z.string(),
    merchantId: z.string(),
    decision: z.string().describe('`approve`, `decline`, `review`, …'),
    score: z.number().nullable(),
    rules: z.array(z.string()).describe('The ids of the rules that fired.'),
    modelVersion: z.string(),
  })
  .meta({ id: 'RecentPayment', description: "One of the user's recent decided payments." });

export const CaseDetail = z
  .strictObject({
    case: Case,
    events: z.array(CaseEvent),
    userCases: z.array(Case),
    signals: SignalsView.optional(),
    activity: z.array(ActivityGroup).optional(),
    lists: z
      .array(CaseListOption)
      .optional()
      .describe("For a lead on a case not closed: the lists the active ruleset declares (a verdict's `addToList`)."),
    recentPayments: z
      .array(RecentPayment)
      .optional()
      .describe(
        "The user's recent decided payments (approved, declined or held), newest first, the case's own included; absent when they cannot be read now.",
      ),
    recentPaymentsKeptDays: z
      .number()
      .optional()
      .describe("How long a user's recent payments are kept after their last payment, days."),
  })
  .meta({ id: 'CaseDetail', description: "A case, its history and the same user's other recent cases." });

export const CasePage = z
  .strictObject({ cases: z.array(Case), cursor: z.string().optional().describe("The next page's cursor.") })
  .meta({ id: 'CasePage', description: 'One page of cases.' });

export const CaseAnswer = z.strictObject({ case: Case }).meta({ id: 'CaseAnswer', description: 'A case.' });

const figures = {
  closed: z.number(),
  fraud: z.number(),
  legit: z.number(),
  falsePositiveRate: z.number().nullable(),
  handlingSeconds: z.strictObject({ median: z.number(), p90: z.number() }).nullable(),
  slaBreached: z.number(),
};

export const CaseFigures = z
  .strictObject(figures)
  .meta({ id: 'CaseFigures', description: 'Figures of a group of cases closed in a range.' });

export const CaseAnalytics = z
  .strictObject({
    from: z.string(),
    to: z.string(),
    total: CaseFigures,
    byQueue: z.array(z.strictObject({ ...figures, queue: z.string().nullable() })),
    byRule: z.array(z.strictObject({ ...figures, rule: z.string() })),
  })
  .meta({ id: 'CaseAnalytics', description: 'The case analytics of a range of closing times.' });

export const Me = z
  .strictObject({
    name: z.string(),
    roles: z.array(z.string()),
    development: z.boolean(),
    mode: z.string(),
  })
  .meta({ id: 'Me', description: 'Who is acting.' });

export const Label = z
  .strictObject({
    transactionId: z.string(),
    label: z.enum(['fraud', 'legit']),
    reportedAt: z.string(),
    source: z.literal('case'),
  })
  .meta({ id: 'CaseLabel', description: "The transaction's label a verdict makes." });
/** The label a verdict answers with (the service types it `unknown`). */
export type CaseLabel = z.output<typeof Label>;
