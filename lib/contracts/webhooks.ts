/**
 * The webhook API's contracts (`/api/webhooks`; docs/webhooks.md), leads only.
 * @module
 */
import { z } from 'zod';
import { defineContract } from '../http/contract';
import { createSchema, secretBodySchema } from '../webhooks/webhook-requests';
import { pathParam, queryParam } from './common';

/** Webhook bodies are small. */
const WEBHOOK_BODY_LIMIT_BYTES = 16 * 1024;

const EventType = z.enum(['review.opened', 'review.closed']);

export const Webhook = z
  .strictObject({
    id: z.string(),
    url: z.string(),
    events: z.array(EventType),
    secrets: z.array(z.strictObject({ n: z.number(), createdAt: z.string() })),
    createdBy: z.string(),
    createdAt: z.string(),
    disabled: z.boolean(),
  })
  .meta({ id: 'Webhook', description: "A merchant's endpoint (its secrets by number and date only)." });

export const Delivery = z
  .strictObject({
    id: z.string(),
    webhookId: z.string(),
    eventType: EventType,
    messageId: z.string().describe('The `webhook-id` the receiver saw.'),
    caseId: z.string(),
    transactionId: z.string(),
    attempts: z.number(),
    createdAt: z.string(),
    lastAttemptAt: z.string().optional(),
    deadAt: z.string().optional(),
    deliveredAt: z.string().optional(),
    lastError: z.string().optional(),
    lastStatus: z.number().optional(),
  })
  .meta({ id: 'Delivery', description: 'One event sent (or to send) to one endpoint.' });

const WebhookAnswer = z.strictObject({ webhook: Webhook }).meta({ id: 'WebhookAnswer', description: 'An endpoint.' });
const id = z.strictObject({ id: pathParam('The endpoint id.') });

export const webhooksCreate = defineContract({
  name: 'webhooksCreate',
  method: 'POST',
  route: 'webhooks',
  auth: 'people',
  summary: 'Registers an endpoint (`secret` in the answer when generated).',
  body: createSchema,
  bodyLimitBytes: WEBHOOK_BODY_LIMIT_BYTES,
  status: 201,
  response: z
    .strictObject({ webhook: Webhook, secret: z.string().optional().describe('The generated secret, shown once.') })
    .meta({ id: 'WebhookCreated', description: 'The endpoint registered.' }),
});

export const webhooksList = defineContract({
  name: 'webhooksList',
  method: 'GET',
  route: 'webhooks',
  auth: 'people',
  summary: 'The endpoints, without secrets.',
  status: 200,
  response: z.strictObject({ webhooks: z.array(Webhook) }).meta({ id: 'WebhookList', description: 'The endpoints.' }),
});

export const webhooksDeliveries = defineContract({
  name: 'webhooksDeliveries',
  method: 'GET',
  route: 'webhooks/deliveries',
  auth: 'people',
  summary: 'The dead-letter list (or pending, delivered), newest first.',
  query: z.strictObject({
    state: queryParam('`dead` (default), `pending` or `delivered`.'),
    limit: queryParam('1 to 100 (default 50).'),
    before: queryParam("The previous page's `before`."),
  }),
  serviceChecksQuery: true,
  status: 200,
  response: z
    .strictObject({ deliveries: z.array(Delivery), before: z.string().optional().describe("The next page's start.") })
    .meta({ id: 'DeliveryPage', description: 'One page of deliveries.' }),
});

export const webhooksRedeliver = defineContract({
  name: 'webhooksRedeliver',
  method: 'POST',
  route: 'webhooks/deliveries/{id}/redeliver',
  auth: 'people',
  summary: "A dead delivery (and its case's later ones) is due again now.",
  params: z.strictObject({ id: pathParam('The delivery id.') }),
  status: 200,
  response: z
    .strictObject({ redelivered: z.array(z.string()) })
    .meta({ id: 'Redelivered', description: 'The deliveries due again.' }),
});

export const webhooksDelete = defineContract({
  name: 'webhooksDelete',
  method: 'DELETE',
  route: 'webhooks/{id}',
  auth: 'people',
  summary: 'Removes an endpoint, its secrets and its undelivered events.',
  params: id,
  status: 204,
});

export const webhooksAddSecret = defineContract({
  name: 'webhooksAddSecret',
  method: 'POST',
  route: 'webhooks/{id}/secrets',
  auth: 'people',
  summary: 'Adds a secret (rotation); `secret` in the answer when generated.',
  params: id,
  body: secretBodySchema,
  bodyOptional: true,
  bodyLimitBytes: WEBHOOK_BODY_LIMIT_BYTES,
  status: 201,
  response: z
    .strictObject({ webhook: Webhook, n: z.number(), secret: z.string().optional() })
    .meta({ id: 'SecretAdded', description: 'The endpoint and the new secret\u2019s number.' }),
});

export const webhooksRemoveSecret = defineContract({
  name: 'webhooksRemoveSecret',
  method: 'DELETE',
  route: 'webhooks/{id}/secrets/{n}',
  auth: 'people',
  summary: 'Removes secret n (409 for the last one).',
  params: z.strictObject({ id: pathParam('The endpoint id.'), n: pathParam("The secret's number.") }),
  status: 200,
  response: WebhookAnswer,
});

/** The webhook API's contracts, in the reference page's order. */
export const WEBHOOK_CONTRACTS = [
  webhooksCreate,
  webhooksList,
  webhooksDeliveries,
  webhooksRedeliver,
  webhooksDelete,
  webhooksAddSecret,
  webhooksRemoveSecret,
] as const;
