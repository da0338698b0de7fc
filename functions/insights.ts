import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, sharedEngine } from '../lib/app';
import { jsonResponse, withProblems } from '../lib/http/http-io';

/** The console's read-only views (docs/console.md); an analyst or a lead, as on the case API. */
const authLevel = peopleRoutesAuthLevel();

/** GET /api/insights/rules?days=7: each rule's hits, precision and recall against the labels. */
app.http('insightsRules', {
  route: 'insights/rules',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).insights.rules(request.headers, request.query)),
  ),
});

/** GET /api/insights/drift?days=7: the PSI of each feature and of the score per hour or day. */
app.http('insightsDrift', {
  route: 'insights/drift',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).insights.drift(request.headers, request.query)),
  ),
});

/** GET /api/insights/serving: model and ruleset versions, canaries and shadows. */
app.http('insightsServing', {
  route: 'insights/serving',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).insights.serving(request.headers)),
  ),
});

/** GET /api/insights/ruleset: the serving ruleset's name, version and document (a new draft starts from it). */
app.http('insightsRuleset', {
  route: 'insights/ruleset',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).insights.ruleset(request.headers)),
  ),
});
