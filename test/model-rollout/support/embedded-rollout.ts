import assert from 'node:assert/strict';
import { configureSharedEngine, sharedEngine } from '../../../lib/app';
import type { LocalHost } from '../../../local/host';
import { BlobFeeder } from '../../../local/blob-feeder';
import { InProcessBus } from '../../../local/in-process-bus';
import { startHost } from '../../support/local-host';
import { validEvent } from '../../support/events';
import { copyBundled } from './models';

/** The embedded default (no Redis, no storage account) with a copy of the bundled models folder feeding the blob trigger. */
export interface EmbeddedRollout {
  readonly host: LocalHost;
  /** `http://127.0.0.1:<port>/api`. */
  readonly api: string;
  /** The models folder (a copy of the bundled one): write a version here to upload it. */
  readonly folder: Awaited<ReturnType<typeof copyBundled>>;
  /** Stops the feeder and the host, removes the folder. */
  dispose(): Promise<void>;
}

/**
 * Starts the local host on a copy of the bundled models folder (one worker, batches of 8), with the model
 * feeder polling the folder every 50 ms as the models container; `settings` are set on top.
 */
export async function startEmbeddedRollout(settings: Readonly<Record<string, string>> = {}): Promise<EmbeddedRollout> {
  const folder = await copyBundled();
  for (const k of ['REDIS_URL', 'ModelStorage', 'AzureWebJobsStorage']) delete process.env[k];
  Object.assign(process.env, {
    MODEL_DIR: folder.dir,
    MODELS_CONTAINER: 'models',
    RULESETS_CONTAINER: 'models', // as npm start sets it: ruleset uploads land in the models container too
    SIGNALS_CONTAINER: 'models', // and signals uploads
    INFERENCE_WORKERS: '1',
    BATCH_MAX_SIZE: '8',
    LOG_LEVEL: 'error',
    ...settings,
  });
  configureSharedEngine({ bus: new InProcessBus() }); // as npm start: the embedded bus (the case intake queue)
  const host = await startHost();
  const feeder = await BlobFeeder.start({
    host,
    repository: (await sharedEngine()).models.repository,
    intervalMs: 50,
  });
  return {
    host,
    api: `${host.url}/api`,
    folder,
    dispose: async () => {
      await feeder?.stop();
      await host.dispose();
      await folder.remove();
    },
  };
}

let scored = 0;

/** The ruleset version that decides a payment scored now through the host (`x-ruleset-version`). */
export async function servedRulesetVersion(rollout: EmbeddedRollout): Promise<string | null> {
  const res = await fetch(`${rollout.api}/score`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' },
    body: JSON.stringify(validEvent({ transactionId: `tx-served-${process.pid}-${++scored}` })),
  });
  assert.equal(res.status, 200);
  return res.headers.get('x-ruleset-version');
}
