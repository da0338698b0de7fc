import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, subsystems } from '../lib/app';
import * as c from '../lib/contracts/webhooks';
import { route } from '../lib/http/route';

/**
 * The merchants' webhooks of the case events (docs/webhooks.md; lib/contracts/webhooks.ts), leads only
 * (`x-ms-client-principal`, or the development identity under `npm start`). Without a case database
 * (`CASE_STORE=none`) webhooks are off: every route answers 404, decided when the functions register.
 */
const people = { people: peopleRoutesAuthLevel(), uses: subsystems('webhooks') };

app.http(
  c.webhooksCreate.name,
  route(
    c.webhooksCreate,
    async (input, { webhooks }, request) => ({ body: await webhooks.create(request.headers, await input.body()) }),
    people,
  ),
);

app.http(
  c.webhooksList.name,
  route(
    c.webhooksList,
    async (_input, { webhooks }, request) => ({ body: await webhooks.list(request.headers) }),
    people,
  ),
);

app.http(
  c.webhooksDeliveries.name,
  route(
    c.webhooksDeliveries,
    async (input, { webhooks }, request) => ({ body: await webhooks.deliveries(request.headers, input.query) }),
    people,
  ),
);

app.http(
  c.webhooksRedeliver.name,
  route(
    c.webhooksRedeliver,
    async (input, { webhooks }, request) => ({ body: await webhooks.redeliver(request.headers, input.param('id')) }),
    people,
  ),
);

app.http(
  c.webhooksDelete.name,
  route(
    c.webhooksDelete,
    async (input, { webhooks }, request) => {
      await webhooks.remove(request.headers, input.param('id'));
      return {};
    },
    people,
  ),
);

app.http(
  c.webhooksAddSecret.name,
  route(
    c.webhooksAddSecret,
    async (input, { webhooks }, request) => ({
      body: await webhooks.addSecret(request.headers, input.param('id'), await input.body()),
    }),
    people,
  ),
);

app.http(
  c.webhooksRemoveSecret.name,
  route(
    c.webhooksRemoveSecret,
    async (input, { webhooks }, request) => ({
      body: await webhooks.removeSecret(request.headers, input.param('id'), input.param('n')),
    }),
    people,
  ),
);
