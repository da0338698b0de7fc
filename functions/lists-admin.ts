import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type HttpRequest } from '@azure/functions';
import { subsystems, type AdapterSubsystems } from '../lib/app';
import * as c from '../lib/contracts/lists';
import { parseRemoveBody } from '../lib/decisioning/list-values';
import type { ListsAdmin } from '../lib/governance/audit';
import { readJsonBody } from '../lib/http/http-io';
import { route } from '../lib/http/route';

/**
 * The lists' admin routes (lib/contracts/lists.ts; host master key): entries of a list the active ruleset declares
 * (404 otherwise) read page by page, added (a bad value → problem naming `values.<index>`) and removed (the value in
 * the body, never the URL: request logs keep URLs). A change
 * reaches every instance through Redis pub/sub; adds and removes are audited (`GET /api/audit`). With
 * `RULESET_NAME=none` there are no lists: every route answers 404, decided when the functions register.
 */
const uses = { uses: subsystems('lists', 'governance') };

function lists(s: Pick<AdapterSubsystems, 'lists' | 'governance'>, request: HttpRequest): ListsAdmin {
  return s.governance.audit.lists(s.lists, s.governance.audit.actorOf(request.headers));
}

app.http(
  c.listsPage.name,
  route(
    c.listsPage,
    async (input, s, request) => ({
      body: (await lists(s, request).listPage(
        input.param('name') ?? '',
        input.query.get('cursor') ?? undefined,
      )) as never,
    }),
    uses,
  ),
);

app.http(
  c.listsAdd.name,
  route(
    c.listsAdd,
    async (input, s, request) => {
      const body = await readJsonBody(request, c.LIST_BODY_LIMIT_BYTES);
      return { body: (await lists(s, request).addToList(input.param('name') ?? '', body)) as never };
    },
    uses,
  ),
);

app.http(
  c.listsRemove.name,
  route(
    c.listsRemove,
    async (input, s, request) => {
      const { value } = parseRemoveBody(await readJsonBody(request, c.LIST_REMOVE_BODY_LIMIT_BYTES));
      return { body: (await lists(s, request).removeFromList(input.param('name') ?? '', value)) as never };
    },
    uses,
  ),
);
