import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, output, type InvocationContext } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { messageMeta } from '../lib/async/message-meta';

/** Messages that can never be scored (not JSON, schema violations), with the reason and the original body. */
const rejected = output.serviceBusQueue({ queueName: '%REJECTED_QUEUE%', connection: 'ServiceBusConnection' });

/**
 * Asynchronous scoring: one payment event per message on `%SCORING_QUEUE%`. The result is published to
 * `%RESULTS_TOPIC%` by the engine with message id = transactionId (see README: why not an output binding).
 * Transient failures throw, so Service Bus redelivers and dead-letters after `maxDeliveryCount`.
 */
app.serviceBusQueue('scoreQueue', {
  queueName: '%SCORING_QUEUE%',
  connection: 'ServiceBusConnection',
  extraOutputs: [rejected],
  handler: async (message: unknown, context: InvocationContext) => {
    const meta = messageMeta(context.triggerMetadata);
    try {
      const outcome = await (await sharedEngine()).processMessage(message, meta);
      if (outcome.kind === 'rejected') {
        context.warn(
          `message rejected: ${outcome.rejection.reason} (messageId=${meta.messageId ?? '?'}, deliveryCount=${meta.deliveryCount ?? '?'})`,
        );
        context.extraOutputs.set(rejected, outcome.rejection);
      }
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'internal';
      context.error(
        `scoring failed: ${code} (messageId=${meta.messageId ?? '?'}, deliveryCount=${meta.deliveryCount ?? '?'}); the message will be redelivered`,
      );
      throw err;
    }
  },
});
