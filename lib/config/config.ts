/**
 * The configuration, parsed once from the environment ({@link loadConfig}): the settings' schema is in
 * `env-schema.ts`; this module checks it, names every bad setting, and returns the frozen {@link Config}.
 */
import * as path from 'node:path';
import type { z } from 'zod';
import { configInvalid, configInvalidFields } from './config-error';
import type { Config } from './config-types';
import { appRoot } from './app-root';
import { envSchema } from './env-schema';
import { escalationSettings } from './escalation-settings';
import { learningSettingsFrom } from './learning-settings';
import { casesSettingsFrom } from './case-settings';
import { telemetrySettingsFrom } from './telemetry-settings';

export type { Config } from './config-types';

/** The parsed settings. */
type Env = z.output<typeof envSchema>;

function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

/**
 * Parses settings once. Fails fast with `config_invalid`, naming every bad setting (never its value:
 * settings may hold secrets).
 * @param env the environment, e.g. `process.env` (only the composition root passes it).
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const r = envSchema.safeParse(env);
  if (!r.success) throw configInvalid(r.error);
  const e = r.data;
  const escalation = escalationSettings(e);
  const learning = learningSettingsFrom(e);
  const cases = casesSettingsFrom(e);
  const crossErrors = [...escalation.errors, ...learning.errors, ...cases.errors];
  if (crossErrors.length > 0) throw configInvalidFields(crossErrors);
  const config: Config = {
    ...engineSlices(e),
    ...connectionSlices(e),
    ...rolloutSlices(e),
    escalation: escalation.value,
    learning: learning.value,
    cases: cases.value,
    logLevel: e.LOG_LEVEL,
    telemetry: telemetrySettingsFrom(e),
  };
  return deepFreeze(config);
}

/** The model, ONNX Runtime, inference and admission slices. */
function engineSlices(e: Env): Pick<Config, 'model' | 'ort' | 'inference' | 'admission'> {
  return {
    model: {
      dir: path.resolve(appRoot(), e.MODEL_DIR ?? 'models'),
      name: e.MODEL_NAME,
      version: e.MODEL_VERSION,
      warmupOnStart: e.WARMUP_ON_START,
      healthProbeIntervalMs: e.HEALTH_PROBE_INTERVAL_SEC * 1000,
    },
    ort: {
      executionProviders: e.ORT_EXECUTION_PROVIDERS,
      intraOpThreads: e.ORT_INTRA_OP_THREADS,
      graphOptimization: e.ORT_GRAPH_OPTIMIZATION,
    },
    inference: {
      mode: e.INFERENCE_MODE,
      workers: e.INFERENCE_WORKERS,
      batchMaxSize: e.BATCH_MAX_SIZE,
      batchMaxSizeGpu: e.BATCH_MAX_SIZE_GPU,
      batchWindowMs: e.BATCH_WINDOW_MS,
      queueMax: e.INFERENCE_QUEUE_MAX,
      deadlineMs: e.REQUEST_DEADLINE_MS,
      deadlineMaxMs: Math.max(e.REQUEST_DEADLINE_MAX_MS, e.REQUEST_DEADLINE_MS),
      batchDeadlinePerEventMs: e.BATCH_DEADLINE_PER_EVENT_MS,
    },
    admission: {
      maxInflight: e.ADMISSION_MAX_INFLIGHT,
      minInflight: Math.min(e.ADMISSION_MIN_INFLIGHT, e.ADMISSION_MAX_INFLIGHT),
      intervalMs: e.ADMISSION_INTERVAL_MS,
      queueWaitMs: e.ADMISSION_QUEUE_WAIT_MS,
    },
  };
}

/** The Redis, context, idempotency, Service Bus and HTTP slices. */
function connectionSlices(e: Env): Pick<Config, 'redis' | 'context' | 'idempotency' | 'serviceBus' | 'http'> {
  return {
    redis: {
      url: e.REDIS_URL,
      keyPrefix: e.REDIS_KEY_PREFIX,
      timeoutMs: e.REDIS_TIMEOUT_MS,
      keyVaultUrl: e.KEY_VAULT_URL,
      secretName: e.REDIS_SECRET_NAME,
      host: e.REDIS_HOST,
      entraObjectId: e.REDIS_ENTRA_OBJECT_ID,
      managedIdentityClientId: e.AZURE_CLIENT_ID,
    },
    context: {
      l2TtlSec: e.CONTEXT_L2_TTL_SEC,
      l1TtlSec: Math.min(e.CONTEXT_L1_TTL_SEC, e.CONTEXT_L2_TTL_SEC),
      l1MaxEntries: e.CONTEXT_L1_MAX_ENTRIES,
      l1MaxBytes: e.CONTEXT_L1_MAX_BYTES,
      source: { kind: e.CONTEXT_SOURCE, url: e.CONTEXT_SOURCE_URL, timeoutMs: e.CONTEXT_SOURCE_TIMEOUT_MS },
    },
    idempotency: {
      ttlSec: e.IDEMPOTENCY_TTL_SEC,
      maxEntries: e.IDEMPOTENCY_MAX_ENTRIES,
      lockTtlMs: e.IDEMPOTENCY_LOCK_TTL_MS,
    },
    serviceBus: {
      scoringQueue: e.SCORING_QUEUE,
      resultsTopic: e.RESULTS_TOPIC,
      duplicateWindowSec: e.RESULTS_DUPLICATE_WINDOW_SEC,
      rejectedQueue: e.REJECTED_QUEUE,
      fullyQualifiedNamespace: e.ServiceBusConnection__fullyQualifiedNamespace,
      clientId: e.ServiceBusConnection__clientId ?? e.AZURE_CLIENT_ID,
    },
    http: {
      scoreBodyLimitBytes: e.SCORE_BODY_LIMIT_BYTES,
      batchBodyLimitBytes: e.BATCH_BODY_LIMIT_BYTES,
      oipBodyLimitBytes: e.OIP_BODY_LIMIT_BYTES,
      batchMaxEvents: e.BATCH_MAX_EVENTS,
    },
  };
}

/** The rollout, decisioning and signals slices. */
function rolloutSlices(e: Env): Pick<Config, 'rollout' | 'decisioning' | 'signals'> {
  return {
    rollout: {
      storage: {
        connectionString:
          e.ModelStorage ?? (e.AzureWebJobsStorage?.includes('=') === true ? e.AzureWebJobsStorage : undefined),
        blobServiceUri: e.ModelStorage__blobServiceUri,
        clientId: e.ModelStorage__clientId ?? e.AZURE_CLIENT_ID,
        container: e.MODELS_CONTAINER,
      },
      maxModelBytes: e.MODEL_MAX_BYTES,
      shiftMax: e.MODEL_SHIFT_MAX,
      reconcileIntervalMs: e.MODEL_RECONCILE_INTERVAL_SEC * 1000,
      forceMetadataKey: e.MODEL_FORCE_METADATA_KEY,
      reclaimAfterSwap: e.MODEL_RECLAIM_AFTER_SWAP,
      instanceId: e.INSTANCE_ID ?? e.WEBSITE_INSTANCE_ID ?? e.CONTAINER_APP_REPLICA_NAME,
      stateDir: e.ROLLOUT_STATE_DIR === undefined ? undefined : path.resolve(appRoot(), e.ROLLOUT_STATE_DIR),
      directRollout: e.MODEL_DIRECT_ROLLOUT,
    },
    decisioning: {
      rulesetName: e.RULESET_NAME === 'none' ? undefined : e.RULESET_NAME,
      dir: path.resolve(appRoot(), e.RULESET_DIR),
      container: e.RULESETS_CONTAINER,
      directRollout: e.RULESET_DIRECT_ROLLOUT,
      listL1TtlMs: e.LIST_L1_TTL_SEC * 1000,
      listL1MaxEntries: e.LIST_L1_MAX_ENTRIES,
    },
    signals: {
      name: e.SIGNALS_NAME,
      dir: path.resolve(appRoot(), e.SIGNALS_DIR),
      container: e.SIGNALS_CONTAINER,
      oneScript: e.SIGNALS_ONE_SCRIPT,
      maxEntities: e.SIGNALS_MAX_ENTITIES,
    },
  };
}
