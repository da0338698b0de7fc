import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { adminHandlers } from '../lib/http/admin-routes';
import { jsonResponse, withProblems } from '../lib/http/http-io';

/**
 * The model admin routes: audited (lib/governance/audit.ts), the same handlers (bodies, errors) as the rulesets', with
 * the four-eyes rule when `MODEL_DIRECT_ROLLOUT=false` (a promote, canary or shadow needs a second lead).
 */
const models = adminHandlers(async (request) => {
  const engine = await sharedEngine();
  return engine.governance.admin('model', engine.models, request.headers, engine.models.fourEyes);
});

/** GET /api/models: active, candidate and previous versions, each instance's state, the last rejection, shadow distributions. */
app.http('modelsStatus', {
  route: 'models',
  methods: ['GET'],
  authLevel: 'admin',
  handler: models.status,
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
  handler: models.promote,
});

/** POST /api/models/{name}/rollback: back to the previous pointer on every instance. */
app.http('modelsRollback', {
  route: 'models/{name}/rollback',
  methods: ['POST'],
  authLevel: 'admin',
  handler: models.rollback,
});

/** PUT /api/models/{name}/traffic `{ "candidate": "1.2.0", "canaryPercent": 10, "shadowPercent": 0 }`. */
app.http('modelsTraffic', {
  route: 'models/{name}/traffic',
  methods: ['PUT'],
  authLevel: 'admin',
  handler: models.traffic,
});
