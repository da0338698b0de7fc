/**
 * The settings the app reads from the environment, as one zod schema ({@link envSchema}), and the list of
 * them with their defaults ({@link configSettings}) that the infrastructure contract test reads. `config.ts`
 * turns the parsed settings into the frozen `Config` slices.
 */
import { z } from 'zod';
import { escalationEnv } from './escalation-settings';
import { learningEnv } from './learning-settings';
import { casesEnv } from './case-settings';
import { telemetryEnvShape } from './telemetry-settings';
import { bool, emptyToUndefined, int, num, optStr } from './zod-helpers';

/** The ONNX Runtime execution providers `ORT_EXECUTION_PROVIDERS` accepts. */
export const PROVIDERS = ['cpu', 'cuda', 'dml', 'coreml', 'tensorrt'] as const;

/** Settings read from the environment (app settings in Azure, `local.settings.json` / env locally). */
const envShape = z.object({
  MODEL_DIR: optStr.describe(
    'Models folder (`{name}/{version}.onnx` + `.json`), relative to the app root; unset = `models`.',
  ),
  MODEL_NAME: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,63}$/, { error: 'must be a model name like fraud' })
        .default('fraud'),
    )
    .describe('Name of the model the service serves.'),
  MODEL_VERSION: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^\d+\.\d+\.\d+$/, { error: 'must be a semantic version like 1.0.0' })
        .optional(),
    )
    .describe(
      "Pins the version served while no rollout pointer names one; unset = the version the models folder's `shipped.json` names (a folder without it: its newest).",
    ),
  ORT_EXECUTION_PROVIDERS: z
    .preprocess(
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
    )
    .describe(
      'ONNX Runtime execution providers, comma-separated in order of preference (e.g. `cuda,cpu`); an unavailable one falls back to CPU.',
    ),
  ORT_INTRA_OP_THREADS: int(0, 64, 1).describe('Intra-op threads per ONNX Runtime session (0 = ONNX Runtime default).'),
  ORT_GRAPH_OPTIMIZATION: z
    .preprocess(emptyToUndefined, z.enum(['disabled', 'basic', 'extended', 'all']).default('all'))
    .describe('ONNX Runtime graph optimization level.'),
  INFERENCE_WORKERS: int(0, 64, 0).describe(
    'Inference worker threads; 0 = auto: (cores − 1) ÷ intra-op threads, at least 1. On GPU each worker holds its own CUDA session.',
  ),
  INFERENCE_MODE: z
    .preprocess(
      emptyToUndefined,
      z.enum(['auto', 'workers', 'inline'], { error: 'must be one of auto, workers, inline' }).default('auto'),
    )
    .describe(
      'Where sessions run: `workers` (worker threads), `inline` (on the event loop), `auto` (inline for models ≤ 256 KiB, else workers).',
    ),
  BATCH_MAX_SIZE: int(1, 4096, 64).describe(
    'Largest micro-batch (rows) on CPU, and after a CUDA load fell back to CPU.',
  ),
  BATCH_MAX_SIZE_GPU: int(1, 4096, 32).describe(
    'Largest micro-batch (rows) while a GPU provider is active; replaces `BATCH_MAX_SIZE`.',
  ),
  BATCH_WINDOW_MS: num(0, 1000, 5).describe(
    'While every worker is busy, a batch closes this long after its first request, ms.',
  ),
  INFERENCE_QUEUE_MAX: int(1, 1_000_000, 2048).describe(
    'Bound of the inference queue, rows; past it requests are refused with 503 `overloaded`.',
  ),
  REQUEST_DEADLINE_MS: int(1, 60_000, 1000).describe(
    'Default per-request deadline, ms: how long a caller waits, counted from when the invocation reaches the app (body reading included). A valid request is refused (503) only when the work ahead of it cannot finish within it. Not the latency objective (50 ms), which is a target, not a refusal rule.',
  ),
  REQUEST_DEADLINE_MAX_MS: int(1, 600_000, 2000).describe(
    'Largest deadline a caller may ask for with `x-deadline-ms`, ms; also caps batch deadlines and is the Service Bus batch deadline.',
  ),
  BATCH_DEADLINE_PER_EVENT_MS: num(0, 10_000, 2).describe(
    "A batch request's default deadline grows by this per valid event after the first, ms (capped at `REQUEST_DEADLINE_MAX_MS`).",
  ),
  ADMISSION_MAX_INFLIGHT: int(1, 1_000_000, 1024).describe(
    'Most requests inside the engine at once (HTTP and Service Bus together): a ceiling that protects memory, beside admission by deadline.',
  ),
  ADMISSION_MIN_INFLIGHT: int(1, 1_000_000, 16).describe(
    'Admission by deadline refuses nothing while fewer than this many requests are inside the engine.',
  ),
  ADMISSION_INTERVAL_MS: int(1, 60_000, 100).describe(
    'Interval of the memory ceiling (the gate that caps requests inside at `ADMISSION_MAX_INFLIGHT`), ms.',
  ),
  ADMISSION_QUEUE_WAIT_MS: int(0, 60_000, 5000).describe(
    'How long a Service Bus delivery waits for an admission slot before it fails transiently and is redelivered, ms; 0 = no wait.',
  ),
  REDIS_URL: optStr.describe(
    'Redis URL for local use (`redis://host:6379`); unset (and no `REDIS_HOST` / Key Vault) = in-process store.',
  ),
  REDIS_KEY_PREFIX: z
    .preprocess(emptyToUndefined, z.string().max(64).default('scoring:'))
    .describe('Prefix of every Redis key the service writes.'),
  REDIS_TIMEOUT_MS: int(1, 10_000, 25).describe(
    'Budget of one context lookup in Redis on the request path, ms; past it the lookup degrades.',
  ),
  KEY_VAULT_URL: z
    .preprocess(emptyToUndefined, z.url({ error: 'must be a URL like https://myvault.vault.azure.net' }).optional())
    .describe('Key Vault to read secrets from (Redis connection string, Azure OpenAI key, user-hash key).'),
  REDIS_SECRET_NAME: z
    .preprocess(emptyToUndefined, z.string().default('redis-connection-string'))
    .describe('Key Vault secret holding the Redis connection string (used with `KEY_VAULT_URL`).'),
  REDIS_HOST: optStr.describe(
    'Redis with Microsoft Entra token auth: `host` or `host:port` (TLS, default port 6380); needs `REDIS_ENTRA_OBJECT_ID`.',
  ),
  REDIS_ENTRA_OBJECT_ID: optStr.describe('Object id of the identity used as the Redis user name with Entra auth.'),
  AZURE_CLIENT_ID: optStr.describe(
    'Client id of the user-assigned managed identity (Redis, Key Vault, Service Bus, storage, Azure OpenAI).',
  ),
  CONTEXT_L2_TTL_SEC: int(1, 86_400, 240).describe('TTL of a user context in Redis (L2), s.'),
  CONTEXT_L1_TTL_SEC: int(1, 86_400, 30).describe(
    'TTL of a user context in the in-process cache (L1), s; never above the L2 TTL.',
  ),
  CONTEXT_L1_MAX_ENTRIES: int(1, 10_000_000, 50_000).describe('Most entries in the in-process context cache.'),
  CONTEXT_L1_MAX_BYTES: int(1024, 4 * 1024 ** 3, 64 * 1024 * 1024).describe(
    'Most bytes in the in-process context cache.',
  ),
  CONTEXT_SOURCE: z
    .preprocess(emptyToUndefined, z.enum(['redis', 'http'], { error: 'must be redis or http' }).default('redis'))
    .describe(
      'Origin of profiles on a cache miss: `redis` (`{prefix}profile:<userId>`) or `http` (`CONTEXT_SOURCE_URL`).',
    ),
  CONTEXT_SOURCE_URL: z
    .preprocess(emptyToUndefined, z.url({ error: 'must be a URL like https://profiles.internal/profiles' }).optional())
    .describe('HTTP origin of profiles: `GET {url}/{userId}` answers 200 with the profile or 404.'),
  CONTEXT_SOURCE_TIMEOUT_MS: int(1, 60_000, 100).describe('Timeout of one call to the HTTP profile origin, ms.'),
  IDEMPOTENCY_TTL_SEC: int(60, 30 * 86_400, 6 * 3600).describe(
    "How long a transaction's stored result and publish mark are kept (exactly-once window), s; must not exceed `RESULTS_DUPLICATE_WINDOW_SEC`.",
  ),
  IDEMPOTENCY_MAX_ENTRIES: int(1, 10_000_000, 100_000).describe(
    'Most idempotency records kept in process when there is no Redis.',
  ),
  IDEMPOTENCY_LOCK_TTL_MS: int(1000, 600_000, 30_000).describe(
    'How long a per-transaction lock outlives a dead holder, ms; renewed every third of it while held.',
  ),
  RESULTS_DUPLICATE_WINDOW_SEC: int(60, 7 * 86_400, 6 * 3600).describe(
    "The results topic's duplicate-detection window as deployed, s; must be at least `IDEMPOTENCY_TTL_SEC`.",
  ),
  SCORING_QUEUE: z
    .preprocess(emptyToUndefined, z.string().default('payments'))
    .describe('Service Bus queue of the `scoreQueue` trigger (`%SCORING_QUEUE%`).'),
  RESULTS_TOPIC: z
    .preprocess(emptyToUndefined, z.string().default('risk-completed'))
    .describe('Service Bus topic results are published to (message id = transaction id).'),
  REJECTED_QUEUE: z
    .preprocess(emptyToUndefined, z.string().default('scoring-rejected'))
    .describe('Service Bus queue of messages that can never be scored (`%REJECTED_QUEUE%`).'),
  ServiceBusConnection__fullyQualifiedNamespace: optStr.describe(
    'Service Bus namespace (identity-based connection `ServiceBusConnection`); unset = the embedded in-process bus.',
  ),
  ServiceBusConnection__clientId: optStr.describe('Managed identity for Service Bus; unset = `AZURE_CLIENT_ID`.'),
  SCORE_BODY_LIMIT_BYTES: int(1024, 16 * 1024 ** 2, 64 * 1024).describe('Body limit of `POST /api/score`, bytes.'),
  BATCH_BODY_LIMIT_BYTES: int(1024, 64 * 1024 ** 2, 1024 * 1024).describe(
    'Body limit of `POST /api/score/batch`, bytes.',
  ),
  OIP_BODY_LIMIT_BYTES: int(1024, 64 * 1024 ** 2, 4 * 1024 * 1024).describe(
    'Body limit of `POST /api/v2/models/…/infer`, bytes.',
  ),
  BATCH_MAX_EVENTS: int(1, 10_000, 256).describe('Most events in one `POST /api/score/batch` request.'),
  LOG_LEVEL: z
    .preprocess(emptyToUndefined, z.enum(['debug', 'info', 'warn', 'error']).default('info'))
    .describe('Lowest level of log lines written.'),
  WARMUP_ON_START: bool(true).describe('Load and warm the model in the app-start hook.'),
  ...telemetryEnvShape,
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
  RULESET_NAME: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^([A-Za-z][A-Za-z0-9_.-]{0,63}|none)$/, { error: 'must be a ruleset name like fraud-rules, or none' })
        .default('fraud-rules'),
    )
    .describe(
      "The ruleset served: `{name}` of `rulesets/{name}/{version}.json`; `none` = no rules, the model's thresholds decide.",
    ),
  RULESET_DIR: z
    .preprocess(emptyToUndefined, z.string().max(1024).default('rulesets'))
    .describe('Folder of the shipped rulesets (`{name}/{version}.json`), relative to the app root.'),
  RULESETS_CONTAINER: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/, { error: 'must be a blob container name like models' })
        .default('models'),
    )
    .describe('Blob container of ruleset uploads (`rulesets/{name}/{version}.json`); default the models container.'),
  SIGNALS_NAME: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,63}$/, { error: 'must be a signals name like default' })
        .default('default'),
    )
    .describe(
      'The signals document served: `{name}` of `features/{name}/{version}.json` (uploads) and `signals/{name}/{version}.json` (shipped: one must compile, else the start fails).',
    ),
  SIGNALS_DIR: z
    .preprocess(emptyToUndefined, z.string().max(1024).default('signals'))
    .describe(
      'Folder of the shipped signals versions (`{name}/{version}.json`; the highest that compiles serves without a pointer), relative to the app root.',
    ),
  SIGNALS_CONTAINER: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/, { error: 'must be a blob container name like models' })
        .default('models'),
    )
    .describe('Blob container of signals uploads (`features/{name}/{version}.json`); default the models container.'),
  SIGNALS_ONE_SCRIPT: bool(false).describe(
    "Whether one payment's aggregates of every key go in one Redis script call (`true`: only on a single, non-clustered Redis; fewest commands) or one call per key, sent together (`false`: a clustered Redis, such as Azure Managed Redis, where keys of different entities live on different shards); docs/signals.md.",
  ),
  SIGNALS_MAX_ENTITIES: int(1, 100_000_000, 100_000).describe(
    'Most keys (users, cards, devices, IP addresses, emails, …) whose aggregates the in-process store keeps without Redis (least recently used dropped).',
  ),
  RULESET_DIRECT_ROLLOUT: bool(true).describe(
    'Whether a ruleset uploaded to blob rolls out directly (`true`, embedded defaults: teams without the console) or becomes a draft that another lead approves first (`false`, the Azure deployment); see docs/governance.md.',
  ),
  LIST_L1_TTL_SEC: int(1, 3600, 10).describe(
    'Time to live of a list membership in the in-process cache, s; a list change invalidates it at once on every instance.',
  ),
  LIST_L1_MAX_ENTRIES: int(1, 10_000_000, 100_000).describe('Most list memberships held in the in-process cache.'),
  ...escalationEnv,
  ...learningEnv,
  ...casesEnv,
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
  /** What the setting does (its `.describe()` text; docs/configuration.md is generated from it). */
  readonly description: string | undefined;
  /** The setting's zod schema (the generated page reads the accepted values from it). */
  readonly schema: z.ZodType;
}

/**
 * Every setting the app reads from the environment, in schema order, with its default. Read by the
 * infrastructure contract test (test/infra) so Bicep and the local settings samples follow the code, and by
 * `npm run docs`, which generates docs/configuration.md from it.
 */
export function configSettings(): readonly SettingInfo[] {
  return Object.entries(envShape.shape).map(([name, schema]: [string, z.ZodType]) => {
    const unset = schema.safeParse(undefined);
    return {
      name,
      defaultValue: unset.success ? unset.data : undefined,
      required: !unset.success,
      parse: (raw: string) => schema.parse(raw),
      description: schema.description,
      schema,
    };
  });
}
