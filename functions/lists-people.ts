import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, subsystems, type AdapterSubsystems } from '../lib/app';
import * as c from '../lib/contracts/lists';
import { ListChanges } from '../lib/governance/list-changes';
import { readJsonBody } from '../lib/http/http-io';
import { route } from '../lib/http/route';

/**
 * The lists as people change them from the console (docs/console.md; lib/contracts/lists.ts): analysts and leads
 * read, leads add and remove with a reason the audit entry keeps. Values travel in bodies, never in the URL. The
 * lists service checks the bodies (each bad value named by its index). The admin routes (`/api/lists/{name}…`,
 * function key) are functions/lists-admin.ts. With `RULESET_NAME=none` there are no lists: every route answers 404,
 * decided when the functions register.
 */
const people = { people: peopleRoutesAuthLevel(), uses: subsystems('lists', 'governance') };

const lists = (s: Pick<AdapterSubsystems, 'lists' | 'governance'>): ListChanges =>
  new ListChanges(s.lists, s.governance.audit);

const nameOf = (input: { param(name: string): string | undefined }): string => input.param('name') ?? '';

app.http(
  c.listsPeople.name,
  route(c.listsPeople, async (_input, s, request) => ({ body: await lists(s).names(request.headers) }), people),
);

app.http(
  c.listEntries.name,
  route(
    c.listEntries,
    async (input, s, request) => ({
      body: await lists(s).page(request.headers, nameOf(input), input.query.get('cursor') ?? undefined),
    }),
    people,
  ),
);

app.http(
  c.listEntriesAdd.name,
  route(
    c.listEntriesAdd,
    async (input, s, request) => {
      const body = await readJsonBody(request, c.LIST_BODY_LIMIT_BYTES);
      return { body: (await lists(s).add(request.headers, nameOf(input), body)) as never };
    },
    people,
  ),
);

app.http(
  c.listEntriesRemove.name,
  route(
    c.listEntriesRemove,
    async (input, s, request) => {
      const body = await readJsonBody(request, c.LIST_REMOVE_BODY_LIMIT_BYTES);
      return { body: (await lists(s).remove(request.headers, nameOf(input), body)) as never };
    },
    people,
  ),
);
