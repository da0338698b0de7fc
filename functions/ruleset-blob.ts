import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type InvocationContext } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { describeOutcome } from '../lib/pointer/upload-pipeline';

/**
 * A ruleset uploaded to `%RULESETS_CONTAINER%/rulesets/{name}/{version}.json`. Fires on ONE instance: it
 * validates the ruleset (schema, compile, golden cases) and publishes the ruleset pointer; every instance then
 * swaps. A rejection (naming the rule id and column that does not compile) is logged and kept for
 * `GET /api/rulesets/{name}`, as a model's is; the previous ruleset keeps serving. Only transient failures throw
 * (retried).
 */
app.storageBlob('rulesetBlob', {
  path: '%RULESETS_CONTAINER%/rulesets/{name}/{version}.json',
  connection: 'ModelStorage',
  source: 'EventGrid',
  handler: async (blob: unknown, context: InvocationContext) => {
    const tm = context.triggerMetadata ?? {};
    const blobPath = typeof tm['blobTrigger'] === 'string' ? tm['blobTrigger'] : '';
    const engine = await sharedEngine();
    // the content the runtime delivered (the pipeline checks its size); none: read from the container, capped
    const bytes = Buffer.isBuffer(blob) || blob instanceof Uint8Array ? blob : undefined;
    const outcome = await engine.rulesets.handleUpload(bytes === undefined ? { blobPath } : { blobPath, bytes });
    const { warn, text } = describeOutcome('ruleset', outcome);
    if (warn) context.warn(text);
    else context.log(text);
    await engine.governance.audit.upload('ruleset', outcome); // throws (retried) when the entry cannot be recorded
  },
});
