import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { jsonResponse, readJsonBody, withProblems } from '../lib/http/http-io';

/** Admin request bodies are small. */
const ADMIN_BODY_LIMIT_BYTES = 4096;

/** GET /api/models: active, candidate and previous versions, each instance's state, the last rejection, shadow distributions. */
app.http('modelsStatus', {
  route: 'models',
  methods: ['GET'],
  authLevel: 'admin',
  handler: withProblems(async () => jsonResponse(200, await (await sharedEngine()).models.status())),
});

/**
 * GET /api/models/health: this instance's detailed health: status, model, execution providers, fallback
 * reason, the reason when not ready, when the last sample inference ran, and its place in the fleet.
 */
app.http('modelsHealth', {
  route: 'models/health',
  methods: ['GET'],
  authLevel: 'admin',
  handler: withProblems(async () => jsonResponse(200, (await sharedEngine()).healthDetail())),
});

/** POST /api/models/{name}/promote `{ "version": "1.2.0" }`: makes a validated version active on every instance. */
app.http('modelsPromote', {
  route: 'models/{name}/promote',
  methods: ['POST'],
  authLevel: 'admin',
  handler: withProblems(async (request) => {
    const models = (await sharedEngine()).models;
    const body = await readJsonBody(request, ADMIN_BODY_LIMIT_BYTES);
    return jsonResponse(200, await models.promote(request.params['name'] ?? '', body));
  }),
});

/** POST /api/models/{name}/rollback: back to the previous pointer on every instance. */
app.http('modelsRollback', {
  route: 'models/{name}/rollback',
  methods: ['POST'],
  authLevel: 'admin',
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).models.rollback(request.params['name'] ?? '')),
  ),
});

/** PUT /api/models/{name}/traffic `{ "candidate": "1.2.0", "canaryPercent": 10, "shadowPercent": 0 }`. */
app.http('modelsTraffic', {
  route: 'models/{name}/traffic',
  methods: ['PUT'],
  authLevel: 'admin',
  handler: withProblems(async (request) => {
    const models = (await sharedEngine()).models;
    const body = await readJsonBody(request, ADMIN_BODY_LIMIT_BYTES);
    return jsonResponse(200, await models.traffic(request.params['name'] ?? '', body));
  }),
});
