import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, subsystems } from '../lib/app';
import * as c from '../lib/contracts/cases';
import { route } from '../lib/http/route';

/**
 * The analysts' case queue (docs/cases.md; contracts: lib/contracts/cases.ts). Every route reads who is acting from
 * Easy Auth's `x-ms-client-principal` (or the development identity under `npm start`); `IDENTITY_MODE=disabled`
 * answers 403. `function`, or `anonymous` behind Easy Auth (the console calls these routes from the browser). With
 * `CASE_STORE=none` the case queue is off: every route answers 404, decided when the functions register.
 */
const people = peopleRoutesAuthLevel();
const cases = { people, uses: subsystems('cases') };
const audited = { people, uses: subsystems('cases', 'governance') };

app.http(
  c.casesList.name,
  route(
    c.casesList,
    async (input, { cases }, request) => ({ body: await cases.list(request.headers, input.query) }),
    cases,
  ),
);

app.http(
  c.casesSearch.name,
  route(
    c.casesSearch,
    async (input, { cases }, request) => ({ body: await cases.search(request.headers, await input.body()) }),
    cases,
  ),
);

app.http(
  c.casesNext.name,
  route(
    c.casesNext,
    async (input, { cases }, request) => {
      const found = await cases.next(request.headers, input.query);
      return found === undefined ? { status: 204 } : { body: { case: found } };
    },
    cases,
  ),
);

app.http(
  c.casesAnalytics.name,
  route(
    c.casesAnalytics,
    async (input, { cases }, request) => ({ body: await cases.analytics(request.headers, input.query) }),
    cases,
  ),
);

app.http(
  c.casesGet.name,
  route(
    c.casesGet,
    async (input, { cases }, request) => ({ body: await cases.get(request.headers, input.param('id')) }),
    cases,
  ),
);

app.http(
  c.casesNotes.name,
  route(
    c.casesNotes,
    async (input, { cases }, request) => {
      const body = await input.body();
      return { body: { case: await cases.addNote(request.headers, input.param('id'), body) } };
    },
    cases,
  ),
);

app.http(
  c.casesVerdict.name,
  route(
    c.casesVerdict,
    async (input, { cases, governance }, request) => {
      const body = await input.body();
      const v = await governance.audit.verdict(cases, request.headers, input.param('id'), body);
      return { body: { case: v.case, label: v.label as c.CaseLabel } };
    },
    audited,
  ),
);

app.http(
  c.casesAssign.name,
  route(
    c.casesAssign,
    async (input, { cases, governance }, request) => {
      const body = await input.body();
      const assigned = await governance.audit.assign(cases, request.headers, input.param('id'), body);
      return { body: { case: assigned } };
    },
    audited,
  ),
);

app.http(
  c.me.name,
  route(c.me, async (_input, { cases }, request) => ({ body: cases.me(request.headers) }), cases),
);
