import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type InvocationContext } from '@azure/functions';
import { ResourceFactoryResolver, type ModelBindingData } from '@azure/functions-extensions-base';
import { subsystems } from '../lib/app';
import { using } from '../lib/http/route';
import { describeOutcome } from '../lib/rollout/upload-pipeline';
import { BLOB_BINDING_SOURCE, blobReferenceFactory, isBlobReference } from '../lib/model-rollout/blob-reference';

// Deferred binding: the trigger receives a reference to the blob, never its content (see blob-reference.ts).
const resolver = ResourceFactoryResolver.getInstance();
if (!resolver.hasResourceFactory(BLOB_BINDING_SOURCE))
  resolver.registerResourceFactory(BLOB_BINDING_SOURCE, (d: ModelBindingData | ModelBindingData[]) =>
    blobReferenceFactory(d),
  );

/**
 * A model uploaded to `%MODELS_CONTAINER%/{name}/{version}.onnx` (its optional `{version}.json` manifest
 * uploaded first). Fires on ONE instance: it validates the model and publishes the fleet pointer; every
 * instance (this one included) then loads and swaps it. `sdkBinding: true`: the runtime passes a reference
 * to the blob, not its content; the handler checks the size from the blob's properties, then reads it
 * through the model repository with a byte cap (`MODEL_MAX_BYTES`), hashing while it streams. Connection
 * `ModelStorage`: the host reads `ModelStorage` (connection string) or `ModelStorage__blobServiceUri` +
 * `__queueServiceUri` + `__credential` + `__clientId` (identity); see docs/rollout.md.
 * `source: 'EventGrid'` needs the Event Grid subscription of infra-bicep. Rejections are logged and kept
 * for `GET /api/models`; only transient failures throw (the runtime retries, then moves the blob to the
 * poison queue).
 */
app.storageBlob('modelBlob', {
  path: '%MODELS_CONTAINER%/{name}/{version}.onnx',
  connection: 'ModelStorage',
  source: 'EventGrid',
  sdkBinding: true,
  handler: using(
    subsystems('models', 'governance'),
    async ({ models, governance }, blob: unknown, context: InvocationContext) => {
      const tm = context.triggerMetadata ?? {};
      const blobPath = isBlobReference(blob)
        ? `${blob.container}/${blob.blobName}`
        : typeof tm['blobTrigger'] === 'string'
          ? tm['blobTrigger']
          : '';
      // the content only if a runtime without deferred binding delivered it anyway (then its size is checked after the fact)
      const bytes = Buffer.isBuffer(blob) || blob instanceof Uint8Array ? blob : undefined;
      const metadata =
        typeof tm['metadata'] === 'object' && tm['metadata'] !== null
          ? (tm['metadata'] as Record<string, unknown>)
          : {};
      const outcome = await models.handleUpload(
        bytes === undefined ? { blobPath } : { blobPath, bytes, metadata }, // by reference: metadata from the blob's properties
      );
      const { warn, text } = describeOutcome('model', outcome);
      if (warn) context.warn(text);
      else context.log(text);
      await governance.audit.upload('model', outcome); // throws (retried) when the entry cannot be recorded
    },
  ),
});
