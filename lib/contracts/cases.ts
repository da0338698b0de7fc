/**
 * The case API's contracts (`/api/cases`, `/api/me`; docs/cases.md): each route's query, body and answer.
 * @module
 */
import { z } from 'zod';
import { assignSchema, noteSchema, verdictSchema } from '../cases/case-requests';
import { defineContract } from '../http/contract';
import { OpenObject, Reason, VersionRef, pathParam, queryParam } from './common';

/** Case bodies (a note, a verdict, a search) are small. */
const CASE_BODY_LIMIT_BYTES = 16 * 1024;

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

const filters = {
  queue: queryParam('The queue it was routed to.'),
  rule: queryParam('A rule that fired.'),
  merchantId: queryParam('The merchant.'),
  minScore: queryParam('Score at least this, 0 to 1.'),
};
const listQuery = {
  status: queryParam('`open`, `assigned` or `closed`.'),
  ...filters,
  assignee: queryParam("`me`, or an actor's name (leads)."),
  olderThan: queryParam('An ISO 8601 date-time: cases decided before it.'),
  order: queryParam('`newest` (default) or `oldest`.'),
  cursor: queryParam("The previous page's `cursor`."),
};
const id = z.strictObject({ id: pathParam('The case id.') });
const searchField = (d: string) => z.string({ error: 'must be a string' }).describe(d).optional();

export const casesList = defineContract({
  name: 'casesList',
  method: 'GET',
  route: 'cases',
  auth: 'people',
  summary: 'One page of cases, filtered (`assignee=me`: the caller\u2019s).',
  query: z.strictObject(listQuery),
  serviceChecksQuery: true,
  status: 200,
  response: CasePage,
});

export const casesSearch = defineContract({
  name: 'casesSearch',
  method: 'POST',
  route: 'cases/search',
  auth: 'people',
  summary: 'The case list searched by transaction or user id (ids never travel in a URL).',
  body: z
    .object({
      ...Object.fromEntries(Object.entries(listQuery).map(([k, v]) => [k, searchField(v.unwrap().description ?? '')])),
      transactionId: searchField("The merchant's transaction id."),
      userId: searchField("The payment's user id."),
    })
    .catchall(z.string({ error: 'must be a string' })),
  bodyLimitBytes: CASE_BODY_LIMIT_BYTES,
  status: 200,
  response: CasePage,
});

export const casesNext = defineContract({
  name: 'casesNext',
  method: 'POST',
  route: 'cases/next',
  auth: 'people',
  summary: 'Assigns the oldest open unassigned case matching the filters to the caller.',
  query: z.strictObject(filters),
  serviceChecksQuery: true,
  status: 200,
  response: CaseAnswer,
  otherAnswers: [{ status: 204, description: 'no case matches' }],
});

export const casesAnalytics = defineContract({
  name: 'casesAnalytics',
  method: 'GET',
  route: 'cases/analytics',
  auth: 'people',
  summary: 'Handling time, verdict mix, false-positive rate and SLA breaches per queue and rule.',
  query: z.strictObject({
    from: queryParam('ISO 8601 date-time (default: 7 days before `to`).'),
    to: queryParam('ISO 8601 date-time (default: now).'),
  }),
  serviceChecksQuery: true,
  status: 200,
  response: CaseAnalytics,
});

export const casesGet = defineContract({
  name: 'casesGet',
  method: 'GET',
  route: 'cases/{id}',
  auth: 'people',
  summary: "One case, its history and the same user's other recent cases.",
  params: id,
  status: 200,
  response: CaseDetail,
});

export const casesNotes = defineContract({
  name: 'casesNotes',
  method: 'POST',
  route: 'cases/{id}/notes',
  auth: 'people',
  summary: 'Adds a note (409 on a closed case).',
  params: id,
  body: noteSchema,
  bodyLimitBytes: CASE_BODY_LIMIT_BYTES,
  status: 200,
  response: CaseAnswer,
});

export const casesVerdict = defineContract({
  name: 'casesVerdict',
  method: 'POST',
  route: 'cases/{id}/verdict',
  auth: 'people',
  summary: 'Closes the case with a verdict (it becomes a label; a lead may add to a list).',
  params: id,
  body: verdictSchema,
  bodyLimitBytes: CASE_BODY_LIMIT_BYTES,
  status: 200,
  response: z
    .strictObject({ case: Case, label: Label })
    .meta({ id: 'VerdictAnswer', description: 'The closed case and its label.' }),
});

export const casesAssign = defineContract({
  name: 'casesAssign',
  method: 'POST',
  route: 'cases/{id}/assign',
  auth: 'people',
  summary: 'A lead reassigns a case that is not closed.',
  params: id,
  body: assignSchema,
  bodyLimitBytes: CASE_BODY_LIMIT_BYTES,
  status: 200,
  response: CaseAnswer,
});

export const me = defineContract({
  name: 'me',
  method: 'GET',
  route: 'me',
  auth: 'people',
  summary: 'Who is acting, and whether it is a development identity.',
  status: 200,
  response: Me,
});

/** The case API's contracts, in the reference page's order. */
export const CASE_CONTRACTS = [
  casesList,
  casesSearch,
  casesNext,
  casesAnalytics,
  casesGet,
  casesNotes,
  casesVerdict,
  casesAssign,
  me,
] as const;
