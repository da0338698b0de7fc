import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, sharedEngine } from '../lib/app';
import * as c from '../lib/contracts/webhooks';
import { route } from '../lib/http/route';

/**
 * The merchants' webhooks of the case events (docs/webhooks.md; lib/contracts/webhooks.ts), leads only
 * (`x-ms-client-principal`, or the development identity under `npm start`). 404 without a case database.
 */
const people = { people: peopleRoutesAuthLevel() };

app.http(
  c.webhooksCreate.name,
  route(
    c.webhooksCreate,
    async (input, request) => {
      const engine = await sharedEngine();
      return { body: await engine.webhooks.create(request.headers, await input.body()) };
    },
    people,
  ),
);

app.http(
  c.webhooksList.name,
  route(
    c.webhooksList,
    async (_input, request) => ({ body: await (await sharedEngine()).webhooks.list(request.headers) }),
    people,
  ),
);

app.http(
  c.webhooksDeliveries.name,
  route(
    c.webhooksDeliveries,
    async (input, request) => ({
      body: await (await sharedEngine()).webhooks.deliveries(request.headers, input.query),
    }),
    people,
  ),
);

app.http(
  c.webhooksRedeliver.name,
  route(
    c.webhooksRedeliver,
    async (input, request) => ({
      body: await (await sharedEngine()).webhooks.redeliver(request.headers, input.param('id')),
    }),
    people,
  ),
);

app.http(
  c.webhooksDelete.name,
  route(
    c.webhooksDelete,
    async (input, request) => {
      await (await sharedEngine()).webhooks.remove(request.headers, input.param('id'));
      return {};
    },
    people,
  ),
);

app.http(
  c.webhooksAddSecret.name,
  route(
    c.webhooksAddSecret,
    async (input, request) => {
      const engine = await sharedEngine();
      return { body: await engine.webhooks.addSecret(request.headers, input.param('id'), await input.body()) };
    },
    people,
  ),
);

app.http(
  c.webhooksRemoveSecret.name,
  route(
    c.webhooksRemoveSecret,
    async (input, request) => ({
      body: await (await sharedEngine()).webhooks.removeSecret(request.headers, input.param('id'), input.param('n')),
    }),
    people,
  ),
);
