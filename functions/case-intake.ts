import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, output, type InvocationContext } from '@azure/functions';
import { subsystems } from '../lib/app';
import { batchMessageMeta } from '../lib/async/message-meta';
import { using } from '../lib/http/route';

/** Intake messages that can never become a case, with the reason and the original body. */
const rejected = output.serviceBusQueue({ queueName: '%REJECTED_QUEUE%', connection: 'ServiceBusConnection' });

/**
 * The review cases' intake: the cases the scorer handed to `%CASE_INTAKE_QUEUE%` (message id = transaction id),
 * delivered in batches (`cardinality: 'many'`) and written to the case store with one engine call per batch
 * (idempotent: one case per transaction). A message that can never become a case goes to the rejected queue with
 * its reason; while the database is unavailable the engine waits (backoff by delivery count) and throws, so Service
 * Bus redelivers the batch, and dead-letters it after the queue's `maxDeliveryCount` (docs/cases.md). With
 * `CASE_STORE=none` the intake is off: every delivery fails with 404 `not_found`, decided when the function registers.
 */
app.serviceBusQueue('caseIntake', {
  queueName: '%CASE_INTAKE_QUEUE%',
  connection: 'ServiceBusConnection',
  cardinality: 'many',
  extraOutputs: [rejected],
  handler: using(subsystems('caseIntake'), async ({ caseIntake }, messages: unknown, context: InvocationContext) => {
    const bodies = Array.isArray(messages) ? (messages as unknown[]) : [messages];
    const metas = batchMessageMeta(context.triggerMetadata, bodies.length);
    try {
      const { rejected: refused } = await caseIntake(
        bodies.map((body, i) => ({
          body,
          ...(metas[i]?.messageId === undefined ? {} : { messageId: metas[i].messageId }),
          ...(metas[i]?.deliveryCount === undefined ? {} : { deliveryCount: metas[i].deliveryCount }),
        })),
      );
      if (refused.length > 0) {
        context.warn(
          `${refused.length} case message(s) rejected: ${[...new Set(refused.map((r) => r.detail))].join('; ')}`,
        );
        context.extraOutputs.set(rejected, refused);
      }
    } catch (err) {
      const e = err as { code?: string };
      context.error(
        `case intake failed: ${e.code ?? 'internal'} (${bodies.length} message(s), deliveryCount=${metas[0]?.deliveryCount ?? '?'}); the batch will be redelivered`,
      );
      throw err;
    }
  }),
});
