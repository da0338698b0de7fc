import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { jsonResponse, readJsonBody, withProblems } from '../lib/http/http-io';

/** A list add carries up to 1000 values. */
const LIST_BODY_LIMIT_BYTES = 256 * 1024;

/**
 * POST /api/lists/{name} `{ "values": [...], "ttlSeconds"?: n }`: adds entries to a list the active ruleset
 * declares (404 otherwise; a bad value → problem naming `values.<index>`). The change reaches every instance
 * through Redis pub/sub; adds and removes are audited (`GET /api/audit`). GET /api/lists/{name}?cursor=: one page of entries (at most 100) and the next cursor.
 */
app.http('listsAddOrPage', {
  route: 'lists/{name}',
  methods: ['POST', 'GET'],
  authLevel: 'admin',
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    const lists = engine.governance.audit.lists(engine.lists, engine.governance.audit.actorOf(request.headers));
    const name = request.params['name'] ?? '';
    if (request.method === 'GET')
      return jsonResponse(200, await lists.listPage(name, request.query.get('cursor') ?? undefined));
    const body = await readJsonBody(request, LIST_BODY_LIMIT_BYTES);
    return jsonResponse(200, await lists.addToList(name, body));
  }),
});

/** DELETE /api/lists/{name}/{value}: removes one entry (404 if absent). */
app.http('listsRemove', {
  route: 'lists/{name}/{value}',
  methods: ['DELETE'],
  authLevel: 'admin',
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    const lists = engine.governance.audit.lists(engine.lists, engine.governance.audit.actorOf(request.headers));
    return jsonResponse(200, await lists.removeFromList(request.params['name'] ?? '', request.params['value'] ?? ''));
  }),
});
