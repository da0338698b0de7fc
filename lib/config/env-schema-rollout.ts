/**
 * The model rollout's settings (part of {@link envSchema} in `env-schema.ts`): the models container, validation
 * bounds, the fleet's reconcile and the instance's name.
 */
import { z } from 'zod';
import { bool, emptyToUndefined, int, num, optStr } from './zod-helpers';

/** The environment variables of the model rollout (merged into the config's schema). */
export const rolloutEnv = {
  ModelStorage: optStr.describe(
    "Models container by connection string (the blob trigger's `connection: 'ModelStorage'`).",
  ),
  ModelStorage__blobServiceUri: z
    .preprocess(emptyToUndefined, z.url({ error: 'must be a URL like https://acct.blob.core.windows.net' }).optional())
    .describe('Models container by identity: the blob service URI (with `ModelStorage__clientId`).'),
  ModelStorage__clientId: optStr.describe('Managed identity for the models container.'),
  AzureWebJobsStorage: optStr.describe(
    'Host storage; a connection string here (e.g. `UseDevelopmentStorage=true`) is the models container when `ModelStorage*` is unset; none = the local `MODEL_DIR` folder.',
  ),
  MODELS_CONTAINER: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/, { error: 'must be a blob container name like models' })
        .default('models'),
    )
    .describe('Blob container of model uploads (`%MODELS_CONTAINER%/{name}/{version}.onnx`).'),
  MODEL_MAX_BYTES: int(1024, 2 * 1024 ** 3, 256 * 1024 ** 2).describe(
    "Largest model file accepted, bytes; checked from the blob's properties, then while streaming.",
  ),
  MODEL_SHIFT_MAX: num(0, 1, 0.1).describe(
    'Largest mean absolute golden-set score shift against the active version accepted without force.',
  ),
  MODEL_RECONCILE_INTERVAL_SEC: int(1, 3600, 30).describe('Every instance re-reads the fleet pointer this often, s.'),
  ROLLOUT_STATE_DIR: optStr.describe(
    'Without Redis: a folder (relative to the app root) where the model and ruleset pointers are kept, so that a promote or rollback survives a restart (`npm start` sets `.data/rollout`). Unset: in memory only. With Redis the pointers live there.',
  ),
  HEALTH_PROBE_INTERVAL_SEC: int(1, 3600, 15).describe(
    'Period of the background sample inference that `/api/health/ready` reports, s.',
  ),
  MODEL_RECLAIM_AFTER_SWAP: bool(true).describe('Run one full GC after a retired model version is released.'),
  MODEL_DIRECT_ROLLOUT: bool(true).describe(
    'Whether a model uploaded to blob rolls out directly and a promote, canary or shadow takes effect when one admin asks (`true`, embedded defaults) or an upload is only validated and a promote, canary or shadow takes effect when a second lead asks for the same change (`false`, the Azure deployment: four-eyes); see docs/rollout.md.',
  ),
  MODEL_FORCE_METADATA_KEY: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { error: 'must be a blob metadata name like force' })
        .default('force'),
    )
    .describe('Blob metadata key that, set to `true`, accepts a score shift above `MODEL_SHIFT_MAX`.'),
  INSTANCE_ID: optStr.describe(
    'How this instance names itself in the fleet; unset = `WEBSITE_INSTANCE_ID`, `CONTAINER_APP_REPLICA_NAME`, else `{host}-{pid}`.',
  ),
  WEBSITE_INSTANCE_ID: optStr.describe(
    'Set by the platform (Flex Consumption): the instance name when `INSTANCE_ID` is unset.',
  ),
  CONTAINER_APP_REPLICA_NAME: optStr.describe(
    'Set by the platform (Container Apps): the instance name when `INSTANCE_ID` is unset.',
  ),
};
