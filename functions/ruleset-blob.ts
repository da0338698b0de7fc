import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type InvocationContext } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { AppError } from '../lib/errors/errors';
import { MAX_RULESET_BYTES } from '../lib/decisioning/ruleset-repository';

/**
 * A ruleset uploaded to `%RULESETS_CONTAINER%/rulesets/{name}/{version}.json`. Fires on ONE instance: it
 * validates the ruleset (schema, compile, golden cases) and publishes the ruleset pointer; every instance then
 * swaps. A rejection (naming the rule id and column that does not compile) is logged and kept for
 * `GET /api/rulesets/{name}`; the previous ruleset keeps serving. Only transient failures throw (retried).
 */
app.storageBlob('rulesetBlob', {
  path: '%RULESETS_CONTAINER%/rulesets/{name}/{version}.json',
  connection: 'ModelStorage',
  source: 'EventGrid',
  handler: async (blob: unknown, context: InvocationContext) => {
    const tm = context.triggerMetadata ?? {};
    const blobPath = typeof tm['blobTrigger'] === 'string' ? tm['blobTrigger'] : '';
    const engine = await sharedEngine();
    const bytes = Buffer.isBuffer(blob) || blob instanceof Uint8Array ? Buffer.from(blob) : undefined;
    if (bytes === undefined || bytes.length > MAX_RULESET_BYTES) {
      context.warn(`ruleset rejected: ${blobPath} is empty or over ${MAX_RULESET_BYTES} bytes`);
      return;
    }
    try {
      const r = await engine.rulesets.handleUpload(blobPath, bytes.toString('utf8'));
      context.log(`ruleset published: ${r.name}@${r.version} (generation ${r.generation})`);
    } catch (err) {
      if (err instanceof AppError && !err.transient) {
        const where = err.errors.map((e) => e.message).join('; ');
        context.warn(`ruleset rejected: ${blobPath} (${err.code}): ${err.message} ${where}`);
        return;
      }
      throw err;
    }
  },
});
