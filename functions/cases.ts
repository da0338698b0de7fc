import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, sharedEngine } from '../lib/app';
import { jsonResponse, readJsonBody, withProblems } from '../lib/http/http-io';

/** `function`, or `anonymous` behind Easy Auth (the console calls these routes from the browser: lib/app.ts). */
const authLevel = peopleRoutesAuthLevel();

/** Case bodies (a note, a verdict) are small. */
const CASE_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * The analysts' case queue (docs/cases.md). Every route reads who is acting from Easy Auth's
 * `x-ms-client-principal` (or the development identity under `npm start`); `IDENTITY_MODE=disabled` answers 403.
 * GET /api/cases?status=&queue=&rule=&merchantId=&minScore=&assignee=&olderThan=&order=&cursor=: one page of cases
 * (`assignee=me`: the caller's).
 */
app.http('casesList', {
  route: 'cases',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).cases.list(request.headers, request.query)),
  ),
});

/**
 * POST /api/cases/search `{ transactionId?, userId?, status?, … }`: the list searched by ids, which never travel in a
 * URL (request logs keep URLs); the other fields are the list's parameters.
 */
app.http('casesSearch', {
  route: 'cases/search',
  methods: ['POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const body = await readJsonBody(request, CASE_BODY_LIMIT_BYTES);
    return jsonResponse(200, await (await sharedEngine()).cases.search(request.headers, body));
  }),
});

/**
 * POST /api/cases/next?queue=&rule=&merchantId=&minScore=: assigns the oldest open unassigned case matching the
 * filters to the caller (200 `{ case }`; 204 when none matches).
 */
app.http('casesNext', {
  route: 'cases/next',
  methods: ['POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const c = await (await sharedEngine()).cases.next(request.headers, request.query);
    return c === undefined ? { status: 204, headers: { 'cache-control': 'no-store' } } : jsonResponse(200, { case: c });
  }),
});

/**
 * GET /api/cases/analytics?from=&to=: handling time, verdict mix, false-positive rate and SLA breaches of the cases
 * closed in the range, in total, per queue and per rule.
 */
app.http('casesAnalytics', {
  route: 'cases/analytics',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).cases.analytics(request.headers, request.query)),
  ),
});

/** GET /api/cases/{id}: the case, its history and the same user's other recent cases. */
app.http('casesGet', {
  route: 'cases/{id}',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).cases.get(request.headers, request.params['id'])),
  ),
});

/** POST /api/cases/{id}/notes `{ text }`: adds a note (409 on a closed case). */
app.http('casesNotes', {
  route: 'cases/{id}/notes',
  methods: ['POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    const body = await readJsonBody(request, CASE_BODY_LIMIT_BYTES);
    return jsonResponse(200, { case: await engine.cases.addNote(request.headers, request.params['id'], body) });
  }),
});

/**
 * POST /api/cases/{id}/verdict `{ verdict, reason?, addToList?: { list, ttlSeconds? } }`: the case closes with its
 * label, list entry (leads) and audit entry in one transaction (the same verdict again: 200; another: 409).
 */
app.http('casesVerdict', {
  route: 'cases/{id}/verdict',
  methods: ['POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    const body = await readJsonBody(request, CASE_BODY_LIMIT_BYTES);
    return jsonResponse(
      200,
      await engine.governance.audit.verdict(engine.cases, request.headers, request.params['id'], body),
    );
  }),
});

/** POST /api/cases/{id}/assign `{ assignee }`: a lead reassigns a case that is not closed (audited). */
app.http('casesAssign', {
  route: 'cases/{id}/assign',
  methods: ['POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    const body = await readJsonBody(request, CASE_BODY_LIMIT_BYTES);
    return jsonResponse(200, {
      case: await engine.governance.audit.assign(engine.cases, request.headers, request.params['id'], body),
    });
  }),
});

/** GET /api/me: who is acting, and whether it is a development identity. */
app.http('me', {
  route: 'me',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) => jsonResponse(200, (await sharedEngine()).cases.me(request.headers))),
});
