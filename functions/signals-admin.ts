import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { subsystems } from '../lib/app';
import { signalsAdmin as c } from '../lib/contracts/admin';
import { adminContractRoutes } from '../lib/http/admin-contract-routes';

/**
 * The signals admin routes (lib/contracts/admin.ts; host master key): status, promote, rollback and traffic, audited
 * (lib/governance/audit.ts), the same handlers (bodies, errors) as the other kinds'.
 */
const routes = adminContractRoutes(c, subsystems('governance', 'signals'), ({ governance, signals }, r) =>
  governance.admin('signals', signals, r.headers),
);

for (const op of ['status', 'promote', 'rollback', 'traffic'] as const) app.http(c[op].name, routes[op]);
