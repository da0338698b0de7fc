/**
 * The settings of the stores and the bus (part of {@link envSchema} in `env-schema.ts`): Redis, the user context
 * cache and its origin, exactly-once publishing, and Service Bus.
 */
import { z } from 'zod';
import { emptyToUndefined, int, optStr } from './zod-helpers';

/** The environment variables of Redis, the context, idempotency and Service Bus (merged into the config's schema). */
export const storesEnv = {
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
    'Service Bus namespace (identity-based connection `ServiceBusConnection`); unset = the bus the host passes (`npm start`: its embedded bus).',
  ),
  ServiceBusConnection__clientId: optStr.describe('Managed identity for Service Bus; unset = `AZURE_CLIENT_ID`.'),
};
