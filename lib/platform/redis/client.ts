/**
 * From a connection plan to a Redis client: the options of the plan (an Entra token as the password and its
 * refresh, a connection string read from Key Vault, `REDIS_URL`) over the request path's defaults, and the client.
 * ioredis and the Azure SDK load with this module, which callers import when Redis is configured.
 */
import type { TokenCredential } from '@azure/identity';
import type { SecretClientOptions } from '@azure/keyvault-secrets';
import { Redis, type RedisOptions } from 'ioredis';
import type { Timers } from '../timers';
import { parseRedisConnectionString, readRedisSecret, type RedisPlan, type SecretReader } from './connection';
import { EntraTokenAuth, type EntraAuthEvents } from './entra-auth';

/** What reaching Redis may need: the credential (Entra, Key Vault), a secret reader, clocks. */
export interface RedisAccess {
  /** The credential of Entra auth and of the default Key Vault reader, asked for only when the plan needs one. */
  readonly credential: () => TokenCredential;
  /** Default `new SecretClient(plan.vaultUrl, credential, secretClientOptions)`. */
  readonly secretReader?: SecretReader;
  /** Options of the default `SecretClient` (tests: TLS trust of a local vault, retries). */
  readonly secretClientOptions?: SecretClientOptions;
  readonly timers: Timers;
  /** Wall clock, epoch ms (token expiry). Default `Date.now`. */
  readonly now?: () => number;
  readonly on?: Partial<EntraAuthEvents>;
}

/** The connection options of a plan, and the Entra auth whose token they carry (to attach to every connection). */
export interface RedisConnection {
  readonly options: RedisOptions;
  readonly auth?: EntraTokenAuth;
}

/**
 * The connection options of `plan` (host, port, username, password, TLS, db): Entra (a token of the credential as
 * the password, refreshed before it expires), Key Vault (the secret's connection string) or the URL.
 * @throws AppError `dependency_unavailable` or `config_invalid` (Key Vault, connection string), or the credential's
 * error; no message holds a secret or a token.
 */
export async function redisConnection(
  plan: Exclude<RedisPlan, { mode: 'none' }>,
  access: RedisAccess,
): Promise<RedisConnection> {
  if (plan.mode === 'entra') {
    const auth = await EntraTokenAuth.create({
      credential: access.credential(),
      username: plan.username,
      timers: access.timers,
      ...(access.now === undefined ? {} : { now: access.now }),
      ...(access.on === undefined ? {} : { on: access.on }),
    });
    const options = {
      host: plan.host,
      port: plan.port,
      tls: { servername: plan.host },
      username: auth.username,
      password: auth.password,
    };
    return { options, auth };
  }
  if (plan.mode === 'keyvault') {
    const reader =
      access.secretReader ??
      new (await import('@azure/keyvault-secrets')).SecretClient(
        plan.vaultUrl,
        access.credential(),
        access.secretClientOptions,
      );
    return { options: await readRedisSecret(reader, plan.secretName) };
  }
  return { options: parseRedisConnectionString(plan.url) };
}

/** Builds a client from options (e.g. the request path's defaults and a plan's connection). */
export function createRedisClient(options: RedisOptions): Redis {
  return new Redis(options);
}
