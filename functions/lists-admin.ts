import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type HttpRequest } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import * as c from '../lib/contracts/lists';
import type { ListsAdmin } from '../lib/governance/audit';
import { readJsonBody } from '../lib/http/http-io';
import { route } from '../lib/http/route';

/**
 * The lists' admin routes (lib/contracts/lists.ts; host master key): entries of a list the active ruleset declares
 * (404 otherwise) read page by page, added (a bad value → problem naming `values.<index>`) and removed. A change
 * reaches every instance through Redis pub/sub; adds and removes are audited (`GET /api/audit`).
 */
async function lists(request: HttpRequest): Promise<ListsAdmin> {
  const engine = await sharedEngine();
  return engine.governance.audit.lists(engine.lists, engine.governance.audit.actorOf(request.headers));
}

app.http(
  c.listsPage.name,
  route(c.listsPage, async (input, request) => ({
    body: (await (
      await lists(request)
    ).listPage(input.param('name') ?? '', input.query.get('cursor') ?? undefined)) as never,
  })),
);

app.http(
  c.listsAdd.name,
  route(c.listsAdd, async (input, request) => {
    const l = await lists(request);
    const body = await readJsonBody(request, c.LIST_BODY_LIMIT_BYTES);
    return { body: (await l.addToList(input.param('name') ?? '', body)) as never };
  }),
);

app.http(
  c.listsRemove.name,
  route(c.listsRemove, async (input, request) => ({
    body: (await (await lists(request)).removeFromList(input.param('name') ?? '', input.param('value') ?? '')) as never,
  })),
);
