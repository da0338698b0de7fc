import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, output, type InvocationContext } from '@azure/functions';
import { subsystems } from '../lib/app';
import { using } from '../lib/http/route';
import { batchMessageMeta } from '../lib/async/message-meta';
import type { RejectedMessage } from '../lib/async/async-scorer';

/** Messages that can never be scored (not JSON, schema violations), with the reason and the original body. */
const rejected = output.serviceBusQueue({ queueName: '%REJECTED_QUEUE%', connection: 'ServiceBusConnection' });

/**
 * Asynchronous scoring: one payment event per message on `%SCORING_QUEUE%`, delivered in batches
 * (`cardinality: 'many'`, up to host.json `extensions.serviceBus.maxMessageBatchSize` messages per call),
 * scored with one engine call per batch. Each result is published to `%RESULTS_TOPIC%` by the engine with
 * message id = transactionId (see docs/async.md: why not an output binding); each bad message goes to the rejected
 * queue alone, with its reason. A transient failure throws, so Service Bus redelivers the whole batch
 * (the stored results and published marks make that safe) and dead-letters after `maxDeliveryCount`.
 */
app.serviceBusQueue('scoreQueue', {
  queueName: '%SCORING_QUEUE%',
  connection: 'ServiceBusConnection',
  cardinality: 'many',
  extraOutputs: [rejected],
  handler: using(subsystems('engine'), async ({ engine }, messages: unknown, context: InvocationContext) => {
    const bodies = Array.isArray(messages) ? (messages as unknown[]) : [messages];
    const metas = batchMessageMeta(context.triggerMetadata, bodies.length);
    try {
      const outcomes = await engine.processMessages(bodies.map((body, i) => ({ body, meta: metas[i] ?? {} })));
      const rejections: RejectedMessage[] = [];
      for (const o of outcomes) {
        if (o.kind !== 'rejected') continue;
        const r = o.rejection;
        context.warn(
          `message rejected: ${r.reason} (messageId=${r.messageId ?? '?'}, deliveryCount=${r.deliveryCount ?? '?'})`,
        );
        rejections.push(r);
      }
      if (rejections.length > 0) context.extraOutputs.set(rejected, rejections);
    } catch (err) {
      const e = err as { code?: string; errors?: readonly { path: string; message: string }[] };
      const which = (e.errors ?? []).map((f) => f.path).join(', ');
      context.error(
        `scoring failed: ${e.code ?? 'internal'} (${bodies.length} message(s), first messageId=${metas[0]?.messageId ?? '?'}, deliveryCount=${metas[0]?.deliveryCount ?? '?'}${which === '' ? '' : `; failed: ${which}`}); the batch will be redelivered`,
      );
      throw err;
    }
  }),
});
