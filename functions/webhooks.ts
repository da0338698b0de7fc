import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type HttpRequest } from '@azure/functions';
import { peopleRoutesAuthLevel, sharedEngine } from '../lib/app';
import { jsonResponse, readJsonBody, withProblems } from '../lib/http/http-io';

/** `function`, or `anonymous` behind Easy Auth (lib/app.ts). */
const authLevel = peopleRoutesAuthLevel();

/** Webhook bodies are small. */
const WEBHOOK_BODY_LIMIT_BYTES = 16 * 1024;

/** The body of a request that may have none (`POST .../secrets`): `undefined` when it is empty. */
async function optionalBody(request: HttpRequest): Promise<unknown> {
  const length = request.headers.get('content-length');
  if (request.body === null || length === '0') return undefined;
  if (length === null && (request.headers.get('content-type') ?? '') === '') return undefined;
  return readJsonBody(request, WEBHOOK_BODY_LIMIT_BYTES);
}

/**
 * The merchants' webhooks of the case events (docs/webhooks.md), leads only (`x-ms-client-principal`, or the
 * development identity under `npm start`). 404 without a case database (`CASE_STORE=none`).
 * POST /api/webhooks `{ url, events, secret? }`: registers an endpoint (201; `secret` in the answer when generated).
 * GET /api/webhooks: the endpoints, without secrets.
 */
app.http('webhooksCreate', {
  route: 'webhooks',
  methods: ['POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    const body = await readJsonBody(request, WEBHOOK_BODY_LIMIT_BYTES);
    return jsonResponse(201, await engine.webhooks.create(request.headers, body));
  }),
});

app.http('webhooksList', {
  route: 'webhooks',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).webhooks.list(request.headers)),
  ),
});

/** GET /api/webhooks/deliveries?state=dead&limit=&before=: the dead-letter list (or pending, delivered), newest first. */
app.http('webhooksDeliveries', {
  route: 'webhooks/deliveries',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).webhooks.deliveries(request.headers, request.query)),
  ),
});

/** POST /api/webhooks/deliveries/{id}/redeliver: a dead delivery (and its case's later ones) is due again now. */
app.http('webhooksRedeliver', {
  route: 'webhooks/deliveries/{id}/redeliver',
  methods: ['POST'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).webhooks.redeliver(request.headers, request.params['id'])),
  ),
});

/** DELETE /api/webhooks/{id}: removes an endpoint, its secrets and its undelivered events (204). */
app.http('webhooksDelete', {
  route: 'webhooks/{id}',
  methods: ['DELETE'],
  authLevel,
  handler: withProblems(async (request) => {
    await (await sharedEngine()).webhooks.remove(request.headers, request.params['id']);
    return { status: 204, headers: { 'cache-control': 'no-store' } };
  }),
});

/** POST /api/webhooks/{id}/secrets `{ secret? }`: adds a secret (rotation); `secret` in the answer when generated. */
app.http('webhooksAddSecret', {
  route: 'webhooks/{id}/secrets',
  methods: ['POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    const body = await optionalBody(request);
    return jsonResponse(201, await engine.webhooks.addSecret(request.headers, request.params['id'], body));
  }),
});

/** DELETE /api/webhooks/{id}/secrets/{n}: removes secret n (409 for the last one). */
app.http('webhooksRemoveSecret', {
  route: 'webhooks/{id}/secrets/{n}',
  methods: ['DELETE'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(
      200,
      await (await sharedEngine()).webhooks.removeSecret(request.headers, request.params['id'], request.params['n']),
    ),
  ),
});
