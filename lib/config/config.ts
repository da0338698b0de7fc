import * as path from 'node:path';
import { z } from 'zod';
import { AppError, type FieldError } from '../errors/errors';
import { appRoot } from './app-root';

const emptyToUndefined = (v: unknown): unknown => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const int = (min: number, max: number, def: number) =>
  z.preprocess(
    emptyToUndefined,
    z.coerce.number({ error: 'must be a number' }).int({ error: 'must be an integer' }).min(min).max(max).default(def),
  );
const num = (min: number, max: number, def: number) =>
  z.preprocess(emptyToUndefined, z.coerce.number({ error: 'must be a number' }).min(min).max(max).default(def));
const optStr = z.preprocess(emptyToUndefined, z.string().optional());
const bool = (def: boolean) =>
  z
    .preprocess(
      emptyToUndefined,
      z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).default(def ? 'true' : 'false'),
    )
    .transform((v) => v === 'true' || v === '1');

const PROVIDERS = ['cpu', 'cuda', 'dml', 'coreml', 'tensorrt'] as const;

/** Settings read from the environment (app settings in Azure, `local.settings.json` / env locally). */
const envSchema = z.object({
  MODEL_DIR: optStr,
  MODEL_NAME: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,63}$/, { error: 'must be a model name like fraud' })
      .default('fraud'),
  ),
  MODEL_VERSION: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, { error: 'must be a semantic version like 1.0.0' })
      .optional(),
  ),
  ORT_EXECUTION_PROVIDERS: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .default('cpu')
      .transform((s) =>
        s
          .split(',')
          .map((p) => p.trim().toLowerCase())
          .filter((p) => p !== ''),
      )
      .pipe(z.array(z.enum(PROVIDERS, { error: `each provider must be one of ${PROVIDERS.join(', ')}` })).min(1)),
  ),
  ORT_INTRA_OP_THREADS: int(0, 64, 1),
  ORT_GRAPH_OPTIMIZATION: z.preprocess(
    emptyToUndefined,
    z.enum(['disabled', 'basic', 'extended', 'all']).default('all'),
  ),
  INFERENCE_WORKERS: int(0, 64, 0),
  INFERENCE_MODE: z.preprocess(
    emptyToUndefined,
    z.enum(['auto', 'workers', 'inline'], { error: 'must be one of auto, workers, inline' }).default('auto'),
  ),
  BATCH_MAX_SIZE: int(1, 4096, 64),
  BATCH_MAX_SIZE_GPU: int(1, 4096, 32),
  BATCH_WINDOW_MS: num(0, 1000, 5),
  INFERENCE_QUEUE_MAX: int(1, 1_000_000, 2048),
  REQUEST_DEADLINE_MS: int(1, 60_000, 50),
  REQUEST_DEADLINE_MAX_MS: int(1, 600_000, 2000),
  REDIS_URL: optStr,
  REDIS_KEY_PREFIX: z.preprocess(emptyToUndefined, z.string().max(64).default('scoring:')),
  REDIS_TIMEOUT_MS: int(1, 10_000, 25),
  KEY_VAULT_URL: z.preprocess(
    emptyToUndefined,
    z.url({ error: 'must be a URL like https://myvault.vault.azure.net' }).optional(),
  ),
  REDIS_SECRET_NAME: z.preprocess(emptyToUndefined, z.string().default('redis-connection-string')),
  REDIS_HOST: optStr,
  REDIS_ENTRA_OBJECT_ID: optStr,
  AZURE_CLIENT_ID: optStr,
  CONTEXT_L2_TTL_SEC: int(1, 86_400, 240),
  CONTEXT_L1_TTL_SEC: int(1, 86_400, 30),
  CONTEXT_L1_MAX_ENTRIES: int(1, 10_000_000, 50_000),
  CONTEXT_L1_MAX_BYTES: int(1024, 4 * 1024 ** 3, 64 * 1024 * 1024),
  CONTEXT_SOURCE: z.preprocess(
    emptyToUndefined,
    z.enum(['redis', 'http'], { error: 'must be redis or http' }).default('redis'),
  ),
  CONTEXT_SOURCE_URL: z.preprocess(
    emptyToUndefined,
    z.url({ error: 'must be a URL like https://profiles.internal/profiles' }).optional(),
  ),
  CONTEXT_SOURCE_TIMEOUT_MS: int(1, 60_000, 100),
  IDEMPOTENCY_TTL_SEC: int(60, 30 * 86_400, 6 * 3600),
  IDEMPOTENCY_MAX_ENTRIES: int(1, 10_000_000, 100_000),
  SCORING_QUEUE: z.preprocess(emptyToUndefined, z.string().default('payments')),
  RESULTS_TOPIC: z.preprocess(emptyToUndefined, z.string().default('risk-completed')),
  REJECTED_QUEUE: z.preprocess(emptyToUndefined, z.string().default('scoring-rejected')),
  ServiceBusConnection__fullyQualifiedNamespace: optStr,
  ServiceBusConnection__clientId: optStr,
  SCORE_BODY_LIMIT_BYTES: int(1024, 16 * 1024 ** 2, 64 * 1024),
  BATCH_BODY_LIMIT_BYTES: int(1024, 64 * 1024 ** 2, 1024 * 1024),
  BATCH_MAX_EVENTS: int(1, 10_000, 256),
  LOG_LEVEL: z.preprocess(emptyToUndefined, z.enum(['debug', 'info', 'warn', 'error']).default('info')),
  WARMUP_ON_START: bool(true),
  APPLICATIONINSIGHTS_CONNECTION_STRING: optStr,
  ModelStorage: optStr,
  ModelStorage__blobServiceUri: z.preprocess(
    emptyToUndefined,
    z.url({ error: 'must be a URL like https://acct.blob.core.windows.net' }).optional(),
  ),
  ModelStorage__clientId: optStr,
  AzureWebJobsStorage: optStr,
  MODELS_CONTAINER: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/, { error: 'must be a blob container name like models' })
      .default('models'),
  ),
  MODEL_MAX_BYTES: int(1024, 2 * 1024 ** 3, 256 * 1024 ** 2),
  MODEL_SHIFT_MAX: num(0, 1, 0.1),
  MODEL_RECONCILE_INTERVAL_SEC: int(1, 3600, 30),
  HEALTH_PROBE_INTERVAL_SEC: int(1, 3600, 15),
  MODEL_RECLAIM_AFTER_SWAP: bool(true),
  MODEL_FORCE_METADATA_KEY: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { error: 'must be a blob metadata name like force' })
      .default('force'),
  ),
  INSTANCE_ID: optStr,
  WEBSITE_INSTANCE_ID: optStr,
  CONTAINER_APP_REPLICA_NAME: optStr,
});

/** The parsed, frozen configuration. Each module receives only its slice. */
export interface Config {
  readonly model: {
    readonly dir: string;
    readonly name: string;
    readonly version: string | undefined;
    readonly warmupOnStart: boolean;
    /** Period of the background sample inference that readiness reports, ms (`HEALTH_PROBE_INTERVAL_SEC`, default 15 s). */
    readonly healthProbeIntervalMs: number;
  };
  readonly ort: {
    readonly executionProviders: readonly (typeof PROVIDERS)[number][];
    readonly intraOpThreads: number;
    readonly graphOptimization: 'disabled' | 'basic' | 'extended' | 'all';
  };
  readonly inference: {
    /** Where sessions run: worker threads, inline on the event loop, or auto (inline only for tiny models). */
    readonly mode: 'auto' | 'workers' | 'inline';
    /** Worker threads; 0 = auto (fits the core count). */
    readonly workers: number;
    readonly batchMaxSize: number;
    readonly batchMaxSizeGpu: number;
    /** Batch window in ms since the first queued request. */
    readonly batchWindowMs: number;
    readonly queueMax: number;
    readonly deadlineMs: number;
    readonly deadlineMaxMs: number;
  };
  readonly redis: {
    readonly url: string | undefined;
    readonly keyPrefix: string;
    /** Budget for one Redis call on the request path, ms. */
    readonly timeoutMs: number;
    readonly keyVaultUrl: string | undefined;
    readonly secretName: string;
    readonly host: string | undefined;
    readonly entraObjectId: string | undefined;
    readonly managedIdentityClientId: string | undefined;
  };
  readonly context: {
    readonly l2TtlSec: number;
    readonly l1TtlSec: number;
    readonly l1MaxEntries: number;
    readonly l1MaxBytes: number;
    /** Origin of profiles on a cache miss: Redis `profile:{userId}` (default) or `GET {url}/{userId}` with a timeout, ms. */
    readonly source: { readonly kind: 'redis' | 'http'; readonly url: string | undefined; readonly timeoutMs: number };
  };
  readonly idempotency: { readonly ttlSec: number; readonly maxEntries: number };
  /** Service Bus: entity names and the namespace for results (unset = the embedded in-process bus). */
  readonly serviceBus: {
    readonly scoringQueue: string;
    readonly resultsTopic: string;
    readonly rejectedQueue: string;
    readonly fullyQualifiedNamespace: string | undefined;
    readonly clientId: string | undefined;
  };
  readonly http: {
    readonly scoreBodyLimitBytes: number;
    readonly batchBodyLimitBytes: number;
    readonly batchMaxEvents: number;
  };
  /** Model rollout: the models container, validation bounds and the fleet reconcile period. */
  readonly rollout: {
    /**
     * The models container: a connection string (`ModelStorage`, else a connection-string `AzureWebJobsStorage`
     * such as `UseDevelopmentStorage=true`), or identity-based (`ModelStorage__blobServiceUri` + `ModelStorage__clientId`).
     * Neither: the local models folder (`MODEL_DIR`) plays the container.
     */
    readonly storage: {
      readonly connectionString: string | undefined;
      readonly blobServiceUri: string | undefined;
      readonly clientId: string | undefined;
      readonly container: string;
    };
    /** Largest model file accepted, bytes (default 256 MiB). */
    readonly maxModelBytes: number;
    /** Largest mean absolute golden-set score shift against the active version accepted without force (default 0.1). */
    readonly shiftMax: number;
    /** Reconcile period of every instance, ms (default 30 000). */
    readonly reconcileIntervalMs: number;
    /** Blob metadata key that forces an upload past the shift bound (default `force`). */
    readonly forceMetadataKey: string;
    /** Run one full GC after a retired version is released, returning its model buffers at once (default true). */
    readonly reclaimAfterSwap: boolean;
    /** This instance's id (`INSTANCE_ID`, else `WEBSITE_INSTANCE_ID` / `CONTAINER_APP_REPLICA_NAME`); undefined = host name and pid. */
    readonly instanceId: string | undefined;
  };
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  readonly telemetry: { readonly appInsightsConnectionString: string | undefined };
}

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
  if (!r.success) {
    const errors: FieldError[] = r.error.issues.map((i) => ({
      path: i.path.map(String).join('.'),
      message: i.message,
    }));
    throw new AppError(
      'config_invalid',
      `Invalid settings: ${errors.map((e) => `${e.path} (${e.message})`).join('; ')}`,
      { errors },
    );
  }
  const e = r.data;
  const config: Config = {
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
    },
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
    idempotency: { ttlSec: e.IDEMPOTENCY_TTL_SEC, maxEntries: e.IDEMPOTENCY_MAX_ENTRIES },
    serviceBus: {
      scoringQueue: e.SCORING_QUEUE,
      resultsTopic: e.RESULTS_TOPIC,
      rejectedQueue: e.REJECTED_QUEUE,
      fullyQualifiedNamespace: e.ServiceBusConnection__fullyQualifiedNamespace,
      clientId: e.ServiceBusConnection__clientId ?? e.AZURE_CLIENT_ID,
    },
    http: {
      scoreBodyLimitBytes: e.SCORE_BODY_LIMIT_BYTES,
      batchBodyLimitBytes: e.BATCH_BODY_LIMIT_BYTES,
      batchMaxEvents: e.BATCH_MAX_EVENTS,
    },
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
    },
    logLevel: e.LOG_LEVEL,
    telemetry: { appInsightsConnectionString: e.APPLICATIONINSIGHTS_CONNECTION_STRING },
  };
  return deepFreeze(config);
}
