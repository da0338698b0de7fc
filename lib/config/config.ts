import * as path from 'node:path';
import { z } from 'zod';
import { AppError, type FieldError } from '../errors/errors';
import { appRoot } from './app-root';

const emptyToUndefined = (v: unknown): unknown => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const int = (min: number, max: number, def: number) =>
  z.preprocess(emptyToUndefined, z.coerce.number({ error: 'must be a number' }).int({ error: 'must be an integer' }).min(min).max(max).default(def));
const num = (min: number, max: number, def: number) =>
  z.preprocess(emptyToUndefined, z.coerce.number({ error: 'must be a number' }).min(min).max(max).default(def));
const optStr = z.preprocess(emptyToUndefined, z.string().optional());
const bool = (def: boolean) =>
  z.preprocess(emptyToUndefined, z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).default(def ? 'true' : 'false')).transform((v) => v === 'true' || v === '1');

const PROVIDERS = ['cpu', 'cuda', 'dml', 'coreml', 'tensorrt'] as const;

/** Settings read from the environment (app settings in Azure, `local.settings.json` / env locally). */
const envSchema = z.object({
  MODEL_DIR: optStr,
  MODEL_NAME: z.preprocess(emptyToUndefined, z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, { error: 'must be a model name like fraud' }).default('fraud')),
  MODEL_VERSION: z.preprocess(emptyToUndefined, z.string().regex(/^\d+\.\d+\.\d+$/, { error: 'must be a semantic version like 1.0.0' }).optional()),
  ORT_EXECUTION_PROVIDERS: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .default('cpu')
      .transform((s) => s.split(',').map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))
      .pipe(z.array(z.enum(PROVIDERS, { error: `each provider must be one of ${PROVIDERS.join(', ')}` })).min(1)),
  ),
  ORT_INTRA_OP_THREADS: int(0, 64, 1),
  ORT_GRAPH_OPTIMIZATION: z.preprocess(emptyToUndefined, z.enum(['disabled', 'basic', 'extended', 'all']).default('all')),
  INFERENCE_WORKERS: int(0, 64, 0),
  BATCH_MAX_SIZE: int(1, 4096, 64),
  BATCH_MAX_SIZE_GPU: int(1, 4096, 32),
  BATCH_WINDOW_MS: num(0, 1000, 5),
  INFERENCE_QUEUE_MAX: int(1, 1_000_000, 2048),
  REQUEST_DEADLINE_MS: int(1, 60_000, 50),
  REQUEST_DEADLINE_MAX_MS: int(1, 600_000, 2000),
  REDIS_URL: optStr,
  REDIS_KEY_PREFIX: z.preprocess(emptyToUndefined, z.string().max(64).default('scoring:')),
  REDIS_TIMEOUT_MS: int(1, 10_000, 25),
  KEY_VAULT_URL: z.preprocess(emptyToUndefined, z.url({ error: 'must be a URL like https://myvault.vault.azure.net' }).optional()),
  REDIS_SECRET_NAME: z.preprocess(emptyToUndefined, z.string().default('redis-connection-string')),
  REDIS_HOST: optStr,
  REDIS_ENTRA_OBJECT_ID: optStr,
  AZURE_CLIENT_ID: optStr,
  CONTEXT_L2_TTL_SEC: int(1, 86_400, 240),
  CONTEXT_L1_TTL_SEC: int(1, 86_400, 30),
  CONTEXT_L1_MAX_ENTRIES: int(1, 10_000_000, 50_000),
  CONTEXT_L1_MAX_BYTES: int(1024, 4 * 1024 ** 3, 64 * 1024 * 1024),
  IDEMPOTENCY_TTL_SEC: int(60, 30 * 86_400, 6 * 3600),
  IDEMPOTENCY_MAX_ENTRIES: int(1, 10_000_000, 100_000),
  SCORE_BODY_LIMIT_BYTES: int(1024, 16 * 1024 ** 2, 64 * 1024),
  BATCH_BODY_LIMIT_BYTES: int(1024, 64 * 1024 ** 2, 1024 * 1024),
  BATCH_MAX_EVENTS: int(1, 10_000, 256),
  LOG_LEVEL: z.preprocess(emptyToUndefined, z.enum(['debug', 'info', 'warn', 'error']).default('info')),
  WARMUP_ON_START: bool(true),
  APPLICATIONINSIGHTS_CONNECTION_STRING: optStr,
});

/** The parsed, frozen configuration. Each module receives only its slice. */
export interface Config {
  readonly model: { readonly dir: string; readonly name: string; readonly version: string | undefined; readonly warmupOnStart: boolean };
  readonly ort: {
    readonly executionProviders: readonly (typeof PROVIDERS)[number][];
    readonly intraOpThreads: number;
    readonly graphOptimization: 'disabled' | 'basic' | 'extended' | 'all';
  };
  readonly inference: {
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
  readonly context: { readonly l2TtlSec: number; readonly l1TtlSec: number; readonly l1MaxEntries: number; readonly l1MaxBytes: number };
  readonly idempotency: { readonly ttlSec: number; readonly maxEntries: number };
  readonly http: { readonly scoreBodyLimitBytes: number; readonly batchBodyLimitBytes: number; readonly batchMaxEvents: number };
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
    const errors: FieldError[] = r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
    throw new AppError('config_invalid', `Invalid settings: ${errors.map((e) => `${e.path} (${e.message})`).join('; ')}`, { errors });
  }
  const e = r.data;
  const config: Config = {
    model: {
      dir: path.resolve(appRoot(), e.MODEL_DIR ?? 'models'),
      name: e.MODEL_NAME,
      version: e.MODEL_VERSION,
      warmupOnStart: e.WARMUP_ON_START,
    },
    ort: { executionProviders: e.ORT_EXECUTION_PROVIDERS, intraOpThreads: e.ORT_INTRA_OP_THREADS, graphOptimization: e.ORT_GRAPH_OPTIMIZATION },
    inference: {
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
    },
    idempotency: { ttlSec: e.IDEMPOTENCY_TTL_SEC, maxEntries: e.IDEMPOTENCY_MAX_ENTRIES },
    http: { scoreBodyLimitBytes: e.SCORE_BODY_LIMIT_BYTES, batchBodyLimitBytes: e.BATCH_BODY_LIMIT_BYTES, batchMaxEvents: e.BATCH_MAX_EVENTS },
    logLevel: e.LOG_LEVEL,
    telemetry: { appInsightsConnectionString: e.APPLICATIONINSIGHTS_CONNECTION_STRING },
  };
  return deepFreeze(config);
}
