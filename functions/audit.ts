import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, subsystems } from '../lib/app';
import { auditList } from '../lib/contracts/insights';
import { route } from '../lib/http/route';

/** GET /api/audit: the audit trail (leads only; docs/audit.md). 404 without a case database (`CASE_STORE=none`). */
app.http(
  auditList.name,
  route(
    auditList,
    async (input, { governance }, request) => ({ body: await governance.audit.list(request.headers, input.query) }),
    { people: peopleRoutesAuthLevel(), uses: subsystems('governance') },
  ),
);
