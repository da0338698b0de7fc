import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, sharedEngine } from '../lib/app';
import * as c from '../lib/contracts/lists';
import { ListChanges } from '../lib/governance/list-changes';
import { readJsonBody } from '../lib/http/http-io';
import { route } from '../lib/http/route';

/**
 * The lists as people change them from the console (docs/console.md; lib/contracts/lists.ts): analysts and leads
 * read, leads add and remove with a reason the audit entry keeps. Values travel in bodies, never in the URL. The
 * lists service checks the bodies (each bad value named by its index). The admin routes (`/api/lists/{name}…`,
 * function key) are functions/lists-admin.ts.
 */
const people = { people: peopleRoutesAuthLevel() };

async function lists(): Promise<ListChanges> {
  const engine = await sharedEngine();
  return new ListChanges(engine.lists, engine.governance.audit);
}

const nameOf = (input: { param(name: string): string | undefined }): string => input.param('name') ?? '';

app.http(
  c.listsPeople.name,
  route(c.listsPeople, async (_input, request) => ({ body: await (await lists()).names(request.headers) }), people),
);

app.http(
  c.listEntries.name,
  route(
    c.listEntries,
    async (input, request) => ({
      body: await (await lists()).page(request.headers, nameOf(input), input.query.get('cursor') ?? undefined),
    }),
    people,
  ),
);

app.http(
  c.listEntriesAdd.name,
  route(
    c.listEntriesAdd,
    async (input, request) => {
      const l = await lists();
      const body = await readJsonBody(request, c.LIST_BODY_LIMIT_BYTES);
      return { body: (await l.add(request.headers, nameOf(input), body)) as never };
    },
    people,
  ),
);

app.http(
  c.listEntriesRemove.name,
  route(
    c.listEntriesRemove,
    async (input, request) => {
      const l = await lists();
      const body = await readJsonBody(request, c.LIST_REMOVE_BODY_LIMIT_BYTES);
      return { body: (await l.remove(request.headers, nameOf(input), body)) as never };
    },
    people,
  ),
);
