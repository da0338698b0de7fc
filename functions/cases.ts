import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, sharedEngine } from '../lib/app';
import * as c from '../lib/contracts/cases';
import { route } from '../lib/http/route';

/**
 * The analysts' case queue (docs/cases.md; contracts: lib/contracts/cases.ts). Every route reads who is acting from
 * Easy Auth's `x-ms-client-principal` (or the development identity under `npm start`); `IDENTITY_MODE=disabled`
 * answers 403. `function`, or `anonymous` behind Easy Auth (the console calls these routes from the browser).
 */
const people = { people: peopleRoutesAuthLevel() };

app.http(
  c.casesList.name,
  route(
    c.casesList,
    async (input, request) => ({
      body: await (await sharedEngine()).cases.list(request.headers, input.query),
    }),
    people,
  ),
);

app.http(
  c.casesSearch.name,
  route(
    c.casesSearch,
    async (input, request) => {
      const body = await input.body();
      return { body: await (await sharedEngine()).cases.search(request.headers, body) };
    },
    people,
  ),
);

app.http(
  c.casesNext.name,
  route(
    c.casesNext,
    async (input, request) => {
      const found = await (await sharedEngine()).cases.next(request.headers, input.query);
      return found === undefined ? { status: 204 } : { body: { case: found } };
    },
    people,
  ),
);

app.http(
  c.casesAnalytics.name,
  route(
    c.casesAnalytics,
    async (input, request) => ({
      body: await (await sharedEngine()).cases.analytics(request.headers, input.query),
    }),
    people,
  ),
);

app.http(
  c.casesGet.name,
  route(
    c.casesGet,
    async (input, request) => ({
      body: await (await sharedEngine()).cases.get(request.headers, input.param('id')),
    }),
    people,
  ),
);

app.http(
  c.casesNotes.name,
  route(
    c.casesNotes,
    async (input, request) => {
      const engine = await sharedEngine();
      const body = await input.body();
      return { body: { case: await engine.cases.addNote(request.headers, input.param('id'), body) } };
    },
    people,
  ),
);

app.http(
  c.casesVerdict.name,
  route(
    c.casesVerdict,
    async (input, request) => {
      const engine = await sharedEngine();
      const body = await input.body();
      const v = await engine.governance.audit.verdict(engine.cases, request.headers, input.param('id'), body);
      return { body: { case: v.case, label: v.label as c.CaseLabel } };
    },
    people,
  ),
);

app.http(
  c.casesAssign.name,
  route(
    c.casesAssign,
    async (input, request) => {
      const engine = await sharedEngine();
      const body = await input.body();
      const assigned = await engine.governance.audit.assign(engine.cases, request.headers, input.param('id'), body);
      return { body: { case: assigned } };
    },
    people,
  ),
);

app.http(
  c.me.name,
  route(c.me, async (_input, request) => ({ body: (await sharedEngine()).cases.me(request.headers) }), people),
);
