import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { subsystems } from '../lib/app';
import * as c from '../lib/contracts/models';
import { adminContractRoutes } from '../lib/http/admin-contract-routes';
import { route } from '../lib/http/route';

/**
 * The model admin routes (lib/contracts/models.ts; host master key): the status view (`GET /api/models/{name}`,
 * every kind's; `GET /api/models` lists it), audited (lib/governance/audit.ts), the same
 * handlers (bodies, errors) as the rulesets', with the four-eyes rule when `MODEL_DIRECT_ROLLOUT=false` (a promote,
 * canary or shadow needs a second lead: 202 until then).
 */
const routes = adminContractRoutes(
  { status: c.modelsStatus, promote: c.modelsPromote, rollback: c.modelsRollback, traffic: c.modelsTraffic },
  subsystems('governance', 'models'),
  ({ governance, models }, request) => governance.admin('model', models, request.headers, models.fourEyes),
);

app.http(c.modelsStatus.name, routes.status);

app.http(
  c.modelsList.name,
  route(c.modelsList, async (_input, { models }) => ({ body: await models.list() }), { uses: subsystems('models') }),
);

app.http(
  c.modelsHealth.name,
  route(c.modelsHealth, (_input, { engine }) => Promise.resolve({ body: engine.healthDetail() }), {
    uses: subsystems('engine'),
  }),
);

app.http(c.modelsPromote.name, routes.promote);
app.http(c.modelsRollback.name, routes.rollback);
app.http(c.modelsTraffic.name, routes.traffic);
