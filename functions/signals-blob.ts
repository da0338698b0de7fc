import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type InvocationContext } from '@azure/functions';
import { subsystems } from '../lib/app';
import { using } from '../lib/http/route';

/**
 * A signals document uploaded to `%SIGNALS_CONTAINER%/features/{name}/{version}.json`. Fires on ONE instance: it
 * validates the document (compile, name and version, compatibility with the serving ruleset and model versions) and
 * publishes the signals pointer; every instance then swaps. A rejection (naming every field, or who reads a signal
 * the version lacks) is logged and kept for `GET /api/signals/{name}`, as a ruleset's is; the previous version keeps
 * serving. Only transient failures throw (retried).
 */
app.storageBlob('signalsBlob', {
  path: '%SIGNALS_CONTAINER%/features/{name}/{version}.json',
  connection: 'ModelStorage',
  source: 'EventGrid',
  handler: using(subsystems('engine'), async ({ engine }, blob: unknown, context: InvocationContext) => {
    const tm = context.triggerMetadata ?? {};
    const blobPath = typeof tm['blobTrigger'] === 'string' ? tm['blobTrigger'] : '';
    // the content the runtime delivered (the pipeline checks its size); none: read from the container, capped
    const bytes = Buffer.isBuffer(blob) || blob instanceof Uint8Array ? blob : undefined;
    const { warn, text } = await engine.signalsUpload(blobPath, bytes);
    if (warn) context.warn(text);
    else context.log(text);
  }),
});
