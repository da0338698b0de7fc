import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type InvocationContext } from '@azure/functions';
import { subsystems } from '../lib/app';
import { using } from '../lib/http/route';

/**
 * A ruleset uploaded to `%RULESETS_CONTAINER%/rulesets/{name}/{version}.json`. Fires on ONE instance: it
 * validates the ruleset (schema, compile, golden cases) and publishes the ruleset pointer; every instance then
 * swaps. A rejection (naming the rule id and column that does not compile) is logged and kept for
 * `GET /api/rulesets/{name}`, as a model's is; the previous ruleset keeps serving. With
 * `RULESET_DIRECT_ROLLOUT=false` the upload becomes a draft instead, which another lead approves before it can be
 * promoted (docs/governance.md). Only transient failures throw (retried). With `RULESET_NAME=none` every upload fails
 * with 404 `not_found`, decided when the function registers.
 */
app.storageBlob('rulesetBlob', {
  path: '%RULESETS_CONTAINER%/rulesets/{name}/{version}.json',
  connection: 'ModelStorage',
  source: 'EventGrid',
  handler: using(subsystems('rulesetUpload'), async ({ rulesetUpload }, blob: unknown, context: InvocationContext) => {
    const tm = context.triggerMetadata ?? {};
    const blobPath = typeof tm['blobTrigger'] === 'string' ? tm['blobTrigger'] : '';
    // the content the runtime delivered (the pipeline checks its size); none: read from the container, capped
    const bytes = Buffer.isBuffer(blob) || blob instanceof Uint8Array ? blob : undefined;
    const { warn, text } = await rulesetUpload(blobPath, bytes);
    if (warn) context.warn(text);
    else context.log(text);
  }),
});
