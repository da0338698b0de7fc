import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { adminHandlers } from '../lib/http/admin-routes';

/** The ruleset admin routes: audited (lib/governance/audit.ts), the same handlers (bodies, errors) as the models', with the four-eyes rule on drafts. */
const rulesets = adminHandlers(async (request) => {
  const engine = await sharedEngine();
  return engine.governance.admin('ruleset', engine.rulesetAdmin, request.headers);
});

/** GET /api/rulesets/{name}: the version served here, the fleet pointer (active, previous, candidate and its shares, rejections), shadow counts. */
app.http('rulesetsStatus', {
  route: 'rulesets/{name}',
  methods: ['GET'],
  authLevel: 'admin',
  handler: rulesets.status,
});

/** POST /api/rulesets/{name}/promote `{ "version": "1.1.0" }`: validates that version and makes it active on every instance. */
app.http('rulesetsPromote', {
  route: 'rulesets/{name}/promote',
  methods: ['POST'],
  authLevel: 'admin',
  handler: rulesets.promote,
});

/** POST /api/rulesets/{name}/rollback: back to the previous active version on every instance. */
app.http('rulesetsRollback', {
  route: 'rulesets/{name}/rollback',
  methods: ['POST'],
  authLevel: 'admin',
  handler: rulesets.rollback,
});

/**
 * PUT /api/rulesets/{name}/traffic `{ "candidate": "1.1.0", "canaryPercent": 10, "shadowPercent": 0 }`: the
 * candidate decides for a stable share of users and is evaluated in shadow for a share of the other payments.
 */
app.http('rulesetsTraffic', {
  route: 'rulesets/{name}/traffic',
  methods: ['PUT'],
  authLevel: 'admin',
  handler: rulesets.traffic,
});
