import type { RedisOptions } from 'ioredis';
import type { Config } from '../../config/config';
import { AppError } from '../../errors/errors';

/** The Redis settings this module reads (the `redis` slice of the config). */
export type RedisSettings = Config['redis'];

/** How to reach Redis, in order of preference: Entra token, Key Vault connection string, `REDIS_URL`, none. */
export type RedisPlan =
  | { readonly mode: 'entra'; readonly host: string; readonly port: number; readonly username: string }
  | { readonly mode: 'keyvault'; readonly vaultUrl: string; readonly secretName: string }
  | { readonly mode: 'url'; readonly url: string }
  | { readonly mode: 'none' };

/**
 * Picks the connection plan from settings: Entra when `REDIS_HOST` and `REDIS_ENTRA_OBJECT_ID` are set
 * (`host` or `host:port`, TLS, default port 6380); else Key Vault when `KEY_VAULT_URL` is set (secret
 * `REDIS_SECRET_NAME`); else `REDIS_URL`; else none (in-process store).
 */
export function planRedisConnection(s: RedisSettings): RedisPlan {
  if (s.host !== undefined && s.entraObjectId !== undefined) {
    const m = /^(.+?)(?::(\d{1,5}))?$/.exec(s.host.trim());
    return {
      mode: 'entra',
      host: m?.[1] ?? s.host,
      port: m?.[2] === undefined ? 6380 : Number(m[2]),
      username: s.entraObjectId,
    };
  }
  if (s.keyVaultUrl !== undefined) return { mode: 'keyvault', vaultUrl: s.keyVaultUrl, secretName: s.secretName };
  if (s.url !== undefined) return { mode: 'url', url: s.url };
  return { mode: 'none' };
}

/** Log name of a plan, e.g. `redis (entra)`. Holds no URL or secret. */
export function describePlan(plan: RedisPlan): string {
  return plan.mode === 'none' ? 'in-process' : plan.mode === 'keyvault' ? 'redis (key vault)' : `redis (${plan.mode})`;
}

/** Largest reconnect delay, ms. */
export const MAX_RECONNECT_DELAY_MS = 1000;

/**
 * Client options for the request path: no offline queue (a command on a dead connection fails at once),
 * no per-request retries, a command timeout, background reconnects with capped exponential backoff
 * (50 ms × 2ⁿ, at most {@link MAX_RECONNECT_DELAY_MS}), lazy connect, auto-pipelining (the context GET
 * and the velocity script issued together leave in one write).
 * @param timeoutMs request-path budget (`REDIS_TIMEOUT_MS`); commands time out at 4× it, at least 100 ms.
 */
export function baseRedisOptions(timeoutMs: number): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: Math.max(100, timeoutMs * 4),
    connectTimeout: 2000,
    keepAlive: 10_000,
    enableAutoPipelining: true,
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 10), MAX_RECONNECT_DELAY_MS),
  };
}

const INVALID =
  'The Redis connection string is not valid: expected redis://…, rediss://… or host:port,password=…,ssl=True.';

/**
 * Parses a Redis connection string: a `redis://` / `rediss://` URL, or the Azure portal form
 * `host:port,password=…,ssl=True,abortConnect=False`. Returns connection options (host, port, username,
 * password, tls, db).
 * @throws AppError `config_invalid`, whose message never contains the string (it holds a password).
 */
export function parseRedisConnectionString(text: string): RedisOptions {
  const s = text.trim();
  if (/^rediss?:\/\//i.test(s)) {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      throw new AppError('config_invalid', INVALID); // no cause: it would carry the input
    }
    const tls = u.protocol.toLowerCase() === 'rediss:';
    const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
    if (u.hostname === '' || !Number.isInteger(db) || db < 0) throw new AppError('config_invalid', INVALID);
    return {
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: u.port === '' ? 6379 : Number(u.port),
      ...(u.username === '' ? {} : { username: decodeURIComponent(u.username) }),
      ...(u.password === '' ? {} : { password: decodeURIComponent(u.password) }),
      ...(db === 0 ? {} : { db }),
      ...(tls ? { tls: { servername: u.hostname } } : {}),
    };
  }
  const [endpoint = '', ...pairs] = s.split(',');
  const m = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(endpoint.trim());
  if (m === null) throw new AppError('config_invalid', INVALID);
  const opts = new Map<string, string>();
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new AppError('config_invalid', INVALID);
    opts.set(p.slice(0, i).trim().toLowerCase(), p.slice(i + 1).trim());
  }
  const ssl = (opts.get('ssl') ?? 'false').toLowerCase() === 'true';
  const host = m[1] as string;
  const password = opts.get('password');
  const user = opts.get('user');
  return {
    host,
    port: m[2] === undefined ? (ssl ? 6380 : 6379) : Number(m[2]),
    ...(user === undefined ? {} : { username: user }),
    ...(password === undefined ? {} : { password }),
    ...(ssl ? { tls: { servername: host } } : {}),
  };
}

/** A Key Vault secret reader: `@azure/keyvault-secrets`' `SecretClient` is one. */
export interface SecretReader {
  getSecret(name: string): Promise<{ readonly value?: string | undefined }>;
}

/**
 * Reads the Redis connection string from Key Vault and parses it.
 * @throws AppError `dependency_unavailable` (Key Vault unreachable / secret missing) or `config_invalid`
 * (unparsable); messages name the secret, never its value.
 */
export async function readRedisSecret(reader: SecretReader, secretName: string): Promise<RedisOptions> {
  let value: string | undefined;
  try {
    value = (await reader.getSecret(secretName)).value;
  } catch (err) {
    const status = (err as { statusCode?: unknown }).statusCode;
    throw new AppError(
      'dependency_unavailable',
      `Key Vault secret "${secretName}" could not be read${typeof status === 'number' ? ` (HTTP ${status})` : ''}.`,
    );
  }
  if (value === undefined || value.trim() === '')
    throw new AppError('config_invalid', `Key Vault secret "${secretName}" is empty.`);
  try {
    return parseRedisConnectionString(value);
  } catch {
    throw new AppError('config_invalid', `Key Vault secret "${secretName}" is not a valid Redis connection string.`);
  }
}
