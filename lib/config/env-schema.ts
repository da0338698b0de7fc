/**
 * The settings the app reads from the environment, as one zod schema ({@link envSchema}), and the list of
 * them with their defaults ({@link configSettings}) that the infrastructure contract test reads. `config.ts`
 * turns the parsed settings into the frozen `Config` slices.
 */
import { z } from 'zod';
import { escalationEnv } from './escalation-settings';
import { learningEnv } from './learning-settings';
import { telemetryEnvShape } from './telemetry-settings';
import { bool, emptyToUndefined, int, num, optStr } from './zod-helpers';

/** The ONNX Runtime execution providers `ORT_EXECUTION_PROVIDERS` accepts. */
export const PROVIDERS = ['cpu', 'cuda', 'dml', 'coreml', 'tensorrt'] as const;

/** Settings read from the environment (app settings in Azure, `local.settings.json` / env locally). */
const envShape = z.object({
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
  BATCH_DEADLINE_PER_EVENT_MS: num(0, 10_000, 2),
  ADMISSION_MAX_INFLIGHT: int(1, 1_000_000, 1024),
  ADMISSION_MIN_INFLIGHT: int(1, 1_000_000, 16),
  ADMISSION_INTERVAL_MS: int(1, 60_000, 100),
  ADMISSION_QUEUE_WAIT_MS: int(0, 60_000, 5000),
  ADMISSION_HOLD_MS: int(0, 1000, 500),
  ADMISSION_HOST_TARGET_MS: int(0, 60_000, 250),
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
  IDEMPOTENCY_LOCK_TTL_MS: int(1000, 600_000, 30_000),
  RESULTS_DUPLICATE_WINDOW_SEC: int(60, 7 * 86_400, 6 * 3600),
  SCORING_QUEUE: z.preprocess(emptyToUndefined, z.string().default('payments')),
  RESULTS_TOPIC: z.preprocess(emptyToUndefined, z.string().default('risk-completed')),
  REJECTED_QUEUE: z.preprocess(emptyToUndefined, z.string().default('scoring-rejected')),
  ServiceBusConnection__fullyQualifiedNamespace: optStr,
  ServiceBusConnection__clientId: optStr,
  SCORE_BODY_LIMIT_BYTES: int(1024, 16 * 1024 ** 2, 64 * 1024),
  BATCH_BODY_LIMIT_BYTES: int(1024, 64 * 1024 ** 2, 1024 * 1024),
  OIP_BODY_LIMIT_BYTES: int(1024, 64 * 1024 ** 2, 4 * 1024 * 1024),
  BATCH_MAX_EVENTS: int(1, 10_000, 256),
  LOG_LEVEL: z.preprocess(emptyToUndefined, z.enum(['debug', 'info', 'warn', 'error']).default('info')),
  WARMUP_ON_START: bool(true),
  ...telemetryEnvShape,
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
  RULESET_NAME: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^([A-Za-z][A-Za-z0-9_.-]{0,63}|none)$/, { error: 'must be a ruleset name like fraud-rules, or none' })
      .default('fraud-rules'),
  ),
  RULESET_DIR: optStr,
  RULESETS_CONTAINER: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/, { error: 'must be a blob container name like models' })
      .default('models'),
  ),
  LIST_L1_TTL_SEC: int(1, 3600, 10),
  LIST_L1_MAX_ENTRIES: int(1, 10_000_000, 100_000),
  INSTANCE_ID: optStr,
  WEBSITE_INSTANCE_ID: optStr,
  CONTAINER_APP_REPLICA_NAME: optStr,
  ...escalationEnv,
  ...learningEnv,
});

/** {@link envShape} with the checks that span settings. */
export const envSchema = envShape.superRefine((e, ctx) => {
  // A stored result may be re-published (crash after publish, before the mark) as long as it is kept: the
  // topic must still drop that re-publication as a duplicate, so its window must cover the whole TTL.
  if (e.IDEMPOTENCY_TTL_SEC > e.RESULTS_DUPLICATE_WINDOW_SEC) {
    for (const path of ['IDEMPOTENCY_TTL_SEC', 'RESULTS_DUPLICATE_WINDOW_SEC'])
      ctx.addIssue({
        code: 'custom',
        path: [path],
        message: `IDEMPOTENCY_TTL_SEC (${e.IDEMPOTENCY_TTL_SEC}) must not exceed RESULTS_DUPLICATE_WINDOW_SEC (${e.RESULTS_DUPLICATE_WINDOW_SEC}), the results topic's duplicate-detection window`,
      });
  }
});

/** One setting the app reads (see {@link configSettings}). */
export interface SettingInfo {
  /** Environment variable / app setting name. */
  readonly name: string;
  /** Parsed value when the setting is unset, or `undefined` when it has no default (optional). */
  readonly defaultValue: unknown;
  /** True when the app cannot start without it. */
  readonly required: boolean;
  /** Parses a raw value as the app would; throws on an invalid one. */
  readonly parse: (raw: string) => unknown;
}

/**
 * Every setting the app reads from the environment, in schema order, with its default. Read by the
 * infrastructure contract test (test/infra) so Bicep, local.settings.sample.json and the README follow the code.
 */
export function configSettings(): readonly SettingInfo[] {
  return Object.entries(envShape.shape).map(([name, schema]: [string, z.ZodType]) => {
    const unset = schema.safeParse(undefined);
    return {
      name,
      defaultValue: unset.success ? unset.data : undefined,
      required: !unset.success,
      parse: (raw: string) => schema.parse(raw),
    };
  });
}
