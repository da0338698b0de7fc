import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type InvocationContext } from '@azure/functions';
import { sharedEngine } from '../lib/app';

/**
 * A model uploaded to `%MODELS_CONTAINER%/{name}/{version}.onnx` (its optional `{version}.json` manifest
 * uploaded first). Fires on ONE instance: it validates the model and publishes the fleet pointer; every
 * instance (this one included) then loads and swaps it. Connection `ModelStorage`: the host reads
 * `ModelStorage` (connection string) or `ModelStorage__blobServiceUri` + `__queueServiceUri` +
 * `__credential` + `__clientId` (identity); see README, Model rollout. `source: 'EventGrid'` needs the
 * Event Grid subscription of infra-bicep. Rejections are logged and kept for `GET /api/models`; only
 * transient failures throw (the runtime retries, then moves the blob to the poison queue).
 */
app.storageBlob('modelBlob', {
  path: '%MODELS_CONTAINER%/{name}/{version}.onnx',
  connection: 'ModelStorage',
  source: 'EventGrid',
  handler: async (blob: unknown, context: InvocationContext) => {
    const tm = context.triggerMetadata ?? {};
    const blobPath = typeof tm['blobTrigger'] === 'string' ? tm['blobTrigger'] : '';
    const metadata =
      typeof tm['metadata'] === 'object' && tm['metadata'] !== null ? (tm['metadata'] as Record<string, unknown>) : {};
    const bytes = Buffer.isBuffer(blob)
      ? blob
      : blob instanceof Uint8Array
        ? blob
        : Buffer.from(typeof blob === 'string' ? blob : '');
    const outcome = await (await sharedEngine()).models.handleUpload({ blobPath, bytes, metadata });
    if (outcome.kind === 'rejected') {
      const r = outcome.rejection;
      context.warn(`model rejected: ${r.name}@${r.version} failed ${r.check} (${r.code}): ${r.reason}`);
    } else if (outcome.kind === 'published') {
      context.log(
        `model published: ${outcome.name}@${outcome.version} as ${outcome.mode} (generation ${outcome.generation})`,
      );
    } else {
      context.log(`model already published: ${outcome.name}@${outcome.version}`);
    }
  },
});
