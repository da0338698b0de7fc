import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, subsystems } from '../lib/app';
import * as c from '../lib/contracts/insights';
import { route } from '../lib/http/route';

/** The console's read-only views (docs/console.md; lib/contracts/insights.ts); an analyst or a lead. */
const people = { people: peopleRoutesAuthLevel(), uses: subsystems('insights') };

app.http(
  c.insightsRules.name,
  route(
    c.insightsRules,
    async (input, { insights }, request) => ({ body: await insights.rules(request.headers, input.query) }),
    people,
  ),
);

app.http(
  c.insightsDrift.name,
  route(
    c.insightsDrift,
    async (input, { insights }, request) => ({ body: await insights.drift(request.headers, input.query) }),
    people,
  ),
);

app.http(
  c.insightsServing.name,
  route(
    c.insightsServing,
    async (_input, { insights }, request) => ({ body: (await insights.serving(request.headers)) as object }),
    people,
  ),
);

app.http(
  c.insightsRuleset.name,
  route(
    c.insightsRuleset,
    async (_input, { insights }, request) => ({ body: await insights.ruleset(request.headers) }),
    people,
  ),
);
