/**
 * The case API's contracts (`/api/cases`, `/api/me`; docs/cases.md): each route's query, body and answer.
 * @module
 */
import { z } from 'zod';
import { assignSchema, noteSchema, verdictSchema } from '../cases/case-requests';
import { defineContract } from '../http/contract';
import { pathParam, queryParam } from './common';
import { Case, CaseAnalytics, CaseAnswer, CaseDetail, CasePage, Label, Me } from './case-schemas';

export type { CaseLabel } from './case-schemas';

/** Case bodies (a note, a verdict, a search) are small. */
const CASE_BODY_LIMIT_BYTES = 16 * 1024;

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
