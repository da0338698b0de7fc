import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, sharedEngine } from '../lib/app';
import { jsonResponse, withProblems } from '../lib/http/http-io';

/**
 * GET /api/audit?kind=&name=&actor=&from=&to=&cursor=&limit=: one page of the audit trail, newest first (leads only;
 * docs/audit.md). 404 without a case database (`CASE_STORE=none`).
 */
app.http('auditList', {
  route: 'audit',
  methods: ['GET'],
  authLevel: peopleRoutesAuthLevel(),
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).governance.audit.list(request.headers, request.query)),
  ),
});
