import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { adminHandlers } from '../lib/http/admin-routes';

/** The signals admin routes: audited (lib/governance/audit.ts), the same handlers (bodies, errors) as the rulesets'. */
const signals = adminHandlers(async (request) => {
  const engine = await sharedEngine();
  return engine.governance.admin('signals', engine.signals, request.headers);
});

/** GET /api/signals/{name}: the version served here, the candidate loaded, the fleet pointer (active, previous, candidate and its shares, rejections). */
app.http('signalsStatus', {
  route: 'signals/{name}',
  methods: ['GET'],
  authLevel: 'admin',
  handler: signals.status,
});

/** POST /api/signals/{name}/promote `{ "version": "1.1.0" }`: validates that version (compile, compatibility) and makes it active on every instance. */
app.http('signalsPromote', {
  route: 'signals/{name}/promote',
  methods: ['POST'],
  authLevel: 'admin',
  handler: signals.promote,
});

/** POST /api/signals/{name}/rollback: back to the previous active version on every instance. */
app.http('signalsRollback', {
  route: 'signals/{name}/rollback',
  methods: ['POST'],
  authLevel: 'admin',
  handler: signals.rollback,
});

/**
 * PUT /api/signals/{name}/traffic `{ "candidate": "1.1.0", "canaryPercent": 10, "shadowPercent": 0 }`: the candidate
 * computes the signals of a stable share of users and runs in shadow for a share of the other payments.
 */
app.http('signalsTraffic', {
  route: 'signals/{name}/traffic',
  methods: ['PUT'],
  authLevel: 'admin',
  handler: signals.traffic,
});
