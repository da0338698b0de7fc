import type { TokenCredential } from '@azure/identity';
import type { SecretClientOptions } from '@azure/keyvault-secrets';
import type { Redis, RedisOptions } from 'ioredis';
import { AppError } from '../errors/errors';
import type { Logger } from '../platform/logger';
import { silentLogger } from '../platform/logger';
import { CachedContextProvider, type ContextRemote } from './cached-context-provider';
import { HttpProfileSource, MemoryProfileSource, type ContextSource } from './context-source';
import { unrefTimers, type Timers } from '../platform/timers';
import type { RedisAccess } from '../platform/redis/client';
import type { EntraTokenAuth } from '../platform/redis/entra-auth';
import type { ContextEvents } from './events';
import { ContextKeys } from './keys';
import { L1Cache } from './l1-cache';
import { MemoryContextCache } from './memory-cache';
import {
  baseRedisOptions,
  describePlan,
  parseRedisConnectionString,
  planRedisConnection,
  type RedisPlan,
  type RedisSettings,
  type SecretReader,
} from '../platform/redis/connection';
import { MemoryVelocityStore } from './velocity';
import { azureCredential } from '../platform/credential';

/** The settings the context store reads (the `redis` and `context` slices of the config). */
export interface ContextSettings {
  readonly redis: RedisSettings;
  readonly context: {
    readonly l2TtlSec: number;
    readonly l1TtlSec: number;
    readonly l1MaxEntries: number;
    readonly l1MaxBytes: number;
    /** Origin of profiles on a miss: `redis` (default, `profile:{userId}`) or `http` (`GET {url}/{userId}`). */
    readonly source?: { readonly kind: 'redis' | 'http'; readonly url: string | undefined; readonly timeoutMs: number };
  };
}

/** Dependencies of {@link createContextProvider}; each has a production default. */
export interface ContextProviderDeps {
  readonly logger?: Logger;
  /** A ready-made client (tests, bench), used instead of the settings' plan and owned by the provider. */
  readonly redis?: Redis;
  /** Makes the client from the resolved options (request-path defaults + host, port, username, password, tls). Default `new Redis(options)`. */
  readonly createClient?: (options: RedisOptions) => Redis;
  /** For Entra and Key Vault. Default `DefaultAzureCredential` (with `AZURE_CLIENT_ID` as managed identity). */
  readonly credential?: TokenCredential;
  /** Default `new SecretClient(KEY_VAULT_URL, credential, secretClientOptions)`. */
  readonly secretReader?: SecretReader;
  /** Options of the default `SecretClient` (tests: TLS trust of a local vault, retries). */
  readonly secretClientOptions?: SecretClientOptions;
  /** Origin; default from settings (Redis profiles, HTTP, or in-process when no Redis). */
  readonly source?: ContextSource;
  /** Wall clock, epoch ms (velocity windows, TTLs, token expiry). Default `Date.now`. */
  readonly now?: () => number;
  readonly timers?: Timers;
  readonly on?: Partial<ContextEvents>;
  /** How long creation waits for the first connection, ms. Default 3000; then it goes on in the background. */
  readonly connectWaitMs?: number;
  /** Payments kept per user for velocity. Default 10 000. */
  readonly maxEventsPerUser?: number;
}

/** Merges the caller's event handlers with the ones that log. */
function loggingEvents(logger: Logger, extra: Partial<ContextEvents> = {}): Partial<ContextEvents> {
  return {
    degraded: (e) => (logger.debug('context lookup degraded', e), extra.degraded?.(e)),
    corrupt: (e) => (logger.warn('unreadable cached context treated as a miss', e), extra.corrupt?.(e)),
    connection: (e) => (
      e.state === 'ready'
        ? logger.info('context store: connected')
        : logger.warn('context store: connection lost; scoring goes on degraded'),
      extra.connection?.(e)
    ),
    setupFailed: (e) => (
      logger.error('context store: setup failed; retrying in the background', e),
      extra.setupFailed?.(e)
    ),
    tokenRefreshed: (e) => (
      logger.info('context store: Entra token refreshed', { nextRefreshInMs: e.nextRefreshInMs }),
      extra.tokenRefreshed?.(e)
    ),
    tokenRefreshFailed: (e) => (
      logger.warn('context store: Entra token refresh failed', e),
      extra.tokenRefreshFailed?.(e)
    ),
    writeFailed: (e) => (logger.debug('context cache write failed', e), extra.writeFailed?.(e)),
  };
}

/**
 * Builds the user-context provider from settings. Redis is chosen in this order: Entra token auth, a
 * connection string from Key Vault, `REDIS_URL`; with none, an in-process store. Logs once which store is
 * used (never a URL or secret). If Key Vault or the credential fails, lookups are degraded while setup is
 * retried in the background (backoff 1 s → 60 s).
 * @throws AppError `config_invalid` for settings that cannot work (`CONTEXT_SOURCE=http` without a URL, a
 * malformed `REDIS_URL`).
 */
export async function createContextProvider(
  settings: ContextSettings,
  deps: ContextProviderDeps = {},
): Promise<CachedContextProvider> {
  const logger = deps.logger ?? silentLogger;
  const on = loggingEvents(logger, deps.on);
  const { redis: r, context: c } = settings;
  const keys = new ContextKeys(r.keyPrefix);
  const now = deps.now;
  const l1 = new L1Cache({
    maxEntries: c.l1MaxEntries,
    maxBytes: c.l1MaxBytes,
    ttlMs: Math.min(c.l1TtlSec, c.l2TtlSec) * 1000,
    ...(now === undefined ? {} : { now }),
  });
  const src = c.source ?? { kind: 'redis' as const, url: undefined, timeoutMs: r.timeoutMs };
  if (src.kind === 'http' && src.url === undefined)
    throw new AppError('config_invalid', 'CONTEXT_SOURCE=http needs CONTEXT_SOURCE_URL.');
  const source =
    deps.source ??
    (src.kind === 'http' && src.url !== undefined
      ? new HttpProfileSource({ baseUrl: src.url, timeoutMs: src.timeoutMs })
      : undefined);
  const provider = new CachedContextProvider({
    keys,
    l1,
    timeoutMs: r.timeoutMs,
    originTimeoutMs: src.kind === 'http' ? src.timeoutMs : r.timeoutMs,
    ...(now === undefined ? {} : { now }),
    on,
  });

  const plan: RedisPlan = deps.redis !== undefined ? { mode: 'url', url: 'injected' } : planRedisConnection(r);
  if (plan.mode === 'none') {
    provider.attach(memoryRemote(settings, deps, source, on));
    logger.info('context store: in-process (no Redis configured; not shared between instances)');
    return provider;
  }
  const description = deps.redis !== undefined ? 'redis (injected client)' : describePlan(plan);
  logger.info(`context store: ${description}`);
  // a bad REDIS_URL is a settings error: fail fast (the message never repeats the URL)
  if (plan.mode === 'url' && deps.redis === undefined) parseRedisConnectionString(plan.url);
  await connectRedis({ provider, plan, description, settings, deps, keys, source, on });
  return provider;
}

/** The in-process remote used without Redis: an L2 in memory, in-process velocity, the profiles of `source`. */
function memoryRemote(
  settings: ContextSettings,
  deps: ContextProviderDeps,
  source: ContextSource | undefined,
  on: Partial<ContextEvents>,
): ContextRemote {
  const now = deps.now;
  return {
    description: 'in-process',
    l2: new MemoryContextCache({ ttlMs: settings.context.l2TtlSec * 1000, ...(now === undefined ? {} : { now }), on }),
    velocity: new MemoryVelocityStore(
      deps.maxEventsPerUser === undefined ? {} : { maxEventsPerUser: deps.maxEventsPerUser },
    ),
    source: source ?? new MemoryProfileSource(),
    available: () => true,
    dispose: () => Promise.resolve(),
  };
}

/** What {@link connectRedis} connects, and with what. */
interface RedisSetUp {
  readonly provider: CachedContextProvider;
  readonly plan: Exclude<RedisPlan, { readonly mode: 'none' }>;
  readonly description: string;
  readonly settings: ContextSettings;
  readonly deps: ContextProviderDeps;
  readonly keys: ContextKeys;
  readonly source: ContextSource | undefined;
  readonly on: Partial<ContextEvents>;
}

/**
 * Connects Redis by `plan` and attaches it to the provider; on a failure, reports it and retries in the background
 * (backoff 1 s → 60 s) until it succeeds or the provider is disposed. Returns after the first attempt.
 */
async function connectRedis(o: RedisSetUp): Promise<void> {
  const { provider, plan, description, deps, keys, source, on } = o;
  const { redis: r, context: c } = o.settings;
  const now = deps.now;
  const timers = deps.timers ?? unrefTimers;
  const connectWaitMs = deps.connectWaitMs ?? 3000;
  let credential = deps.credential;
  const access: RedisAccess = {
    credential: () => (credential ??= azureCredential(r.managedIdentityClientId)),
    timers,
    on,
    ...(deps.secretReader === undefined ? {} : { secretReader: deps.secretReader }),
    ...(deps.secretClientOptions === undefined ? {} : { secretClientOptions: deps.secretClientOptions }),
    ...(now === undefined ? {} : { now }),
  };

  const setUp = async (): Promise<void> => {
    // ioredis and the Azure SDK clients load only on the path that uses them (start-up time of `npm start`)
    const { createRedisClient, redisConnection } = await import('../platform/redis/client');
    const { createRedisRemote } = await import('./redis-remote');
    let client = deps.redis;
    let auth: EntraTokenAuth | undefined;
    if (client === undefined) {
      const connection = await redisConnection(plan, access);
      auth = connection.auth;
      client = (deps.createClient ?? createRedisClient)({ ...baseRedisOptions(r.timeoutMs), ...connection.options });
    }
    const remote = await createRedisRemote(client, {
      keys,
      ttlMs: c.l2TtlSec * 1000,
      description,
      connectWaitMs,
      on,
      ...(source === undefined ? {} : { source }),
      ...(auth === undefined ? {} : { auth }),
      ...(now === undefined ? {} : { now }),
      ...(deps.maxEventsPerUser === undefined ? {} : { maxEventsPerUser: deps.maxEventsPerUser }),
    });
    provider.attach(remote);
  };

  const stage = plan.mode === 'entra' ? 'entra' : plan.mode === 'keyvault' ? 'keyvault' : 'connect';
  let delay = 1000;
  const attempt = async (): Promise<void> => {
    if (provider.isDisposed) return;
    try {
      await setUp();
    } catch (err) {
      // messages are ours (AppError) or the credential's; neither carries the connection string or token
      on.setupFailed?.({ stage, message: err instanceof Error ? err.message : 'unknown error', retryInMs: delay });
      timers.setTimeout(() => void attempt(), delay);
      delay = Math.min(delay * 2, 60_000);
    }
  };
  await attempt();
}
