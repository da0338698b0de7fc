import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type HttpRequest } from '@azure/functions';
import { peopleRoutesAuthLevel, sharedEngine } from '../lib/app';
import { ListChanges } from '../lib/governance/list-changes';
import { jsonResponse, readJsonBody, withProblems } from '../lib/http/http-io';

/**
 * The lists as people change them from the console (docs/console.md): analysts and leads read, leads add and
 * remove with a reason the audit entry keeps. Values travel in bodies, never in the URL. The admin routes
 * (`/api/lists/{name}…`, function key) are functions/lists-admin.ts.
 */
const authLevel = peopleRoutesAuthLevel();

/** An add carries up to 1000 values and a reason. */
const LIST_BODY_LIMIT_BYTES = 256 * 1024;

async function lists(): Promise<ListChanges> {
  const engine = await sharedEngine();
  return new ListChanges(engine.lists, engine.governance.audit);
}

const nameOf = (r: HttpRequest): string => r.params['name'] ?? '';

/** GET /api/lists: the lists the active ruleset declares, with their key field and entry count. */
app.http('listsPeople', {
  route: 'lists',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) => jsonResponse(200, await (await lists()).names(request.headers))),
});

/** GET /api/list-entries/{name}?cursor=: one page of entries with their expiry; POST `{ values, ttlSeconds?, reason }`: adds. */
app.http('listEntries', {
  route: 'list-entries/{name}',
  methods: ['GET', 'POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const l = await lists();
    if (request.method === 'GET')
      return jsonResponse(
        200,
        await l.page(request.headers, nameOf(request), request.query.get('cursor') ?? undefined),
      );
    const body = await readJsonBody(request, LIST_BODY_LIMIT_BYTES);
    return jsonResponse(200, await l.add(request.headers, nameOf(request), body));
  }),
});

/** POST /api/list-entries/{name}/remove `{ value, reason }`: removes one entry (404 if absent). */
app.http('listEntriesRemove', {
  route: 'list-entries/{name}/remove',
  methods: ['POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const body = await readJsonBody(request, 4096);
    return jsonResponse(200, await (await lists()).remove(request.headers, nameOf(request), body));
  }),
});
