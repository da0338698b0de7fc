/** Redis connection settings: plan order, connection strings, and the Key Vault path (no Azure here: local vault and redis-server). */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { TokenCredential } from '@azure/identity';
import { testConfig } from '../support/config';
import type { CachedContextProvider } from '../../lib/context/cached-context-provider';
import { createContextProvider } from '../../lib/context/create-context-provider';
import {
  describePlan,
  parseRedisConnectionString,
  planRedisConnection,
  readRedisSecret,
  type SecretReader,
} from '../../lib/platform/redis/connection';
import { AppError } from '../../lib/errors/errors';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { validEvent } from '../support/events';
import { startKeyVaultPeer } from '../support/key-vault-peer';
import { eventually, FakeClock, FakeTimers, OwnRedis, recordingLogger, testPrefix } from './support';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const SECRET = 'Sup3r-s3cret+pw/=';

describe('Redis connection plan', () => {
  const base = {
    REDIS_URL: 'redis://127.0.0.1:6379',
    KEY_VAULT_URL: 'https://kv.vault.azure.net',
    REDIS_HOST: 'c.redis.cache.windows.net',
    REDIS_ENTRA_OBJECT_ID: 'oid',
  };
  it('prefers Entra, then Key Vault, then REDIS_URL, then in-process', () => {
    const plan = (env: Record<string, string>) => planRedisConnection(testConfig(env).redis);
    assert.deepEqual(plan(base), { mode: 'entra', host: 'c.redis.cache.windows.net', port: 6380, username: 'oid' });
    assert.deepEqual(plan({ ...base, REDIS_HOST: 'c.example:10000' }), {
      mode: 'entra',
      host: 'c.example',
      port: 10000,
      username: 'oid',
    });
    assert.deepEqual(plan({ ...base, REDIS_ENTRA_OBJECT_ID: '' }), {
      mode: 'keyvault',
      vaultUrl: 'https://kv.vault.azure.net',
      secretName: 'redis-connection-string',
    });
    assert.deepEqual(plan({ REDIS_URL: base.REDIS_URL }), { mode: 'url', url: base.REDIS_URL });
    assert.deepEqual(plan({}), { mode: 'none' });
    assert.deepEqual(
      [plan(base), plan({ KEY_VAULT_URL: base.KEY_VAULT_URL }), plan({ REDIS_URL: 'redis://:pw@h' }), plan({})].map(
        describePlan,
      ),
      ['redis (entra)', 'redis (key vault)', 'redis (url)', 'in-process'],
    );
  });
});

describe('settings that cannot work fail fast', () => {
  it('rejects a malformed REDIS_URL and an http origin without a URL, without echoing secrets', async () => {
    await assert.rejects(
      createContextProvider(testConfig({ REDIS_URL: `redis://:${SECRET}@` })),
      (e: AppError) => e.code === 'config_invalid' && !e.message.includes(SECRET),
    );
    await assert.rejects(
      createContextProvider(testConfig({ CONTEXT_SOURCE: 'http' })),
      (e: AppError) => e.code === 'config_invalid' && e.message.includes('CONTEXT_SOURCE_URL'),
    );
  });
});

describe('Redis connection strings', () => {
  it('parses URLs and the Azure portal form', () => {
    assert.deepEqual(
      parseRedisConnectionString(`rediss://default:${encodeURIComponent(SECRET)}@c.redis.cache.windows.net:6380/2`),
      {
        host: 'c.redis.cache.windows.net',
        port: 6380,
        username: 'default',
        password: SECRET,
        db: 2,
        tls: { servername: 'c.redis.cache.windows.net' },
      },
    );
    assert.deepEqual(parseRedisConnectionString('redis://localhost'), { host: 'localhost', port: 6379 });
    assert.deepEqual(
      parseRedisConnectionString(`c.redis.cache.windows.net:6380,password=${SECRET},ssl=True,abortConnect=False`),
      {
        host: 'c.redis.cache.windows.net',
        port: 6380,
        password: SECRET,
        tls: { servername: 'c.redis.cache.windows.net' },
      },
    );
    assert.deepEqual(parseRedisConnectionString('c.example,ssl=true'), {
      host: 'c.example',
      port: 6380,
      tls: { servername: 'c.example' },
    });
  });

  it('rejects a bad string without repeating it', () => {
    for (const bad of [
      `redis://:${SECRET}@`,
      `host name with spaces,password=${SECRET}`,
      `h:1,${SECRET.replace(/=/g, '')}`,
    ]) {
      assert.throws(
        () => parseRedisConnectionString(bad),
        (e: unknown) =>
          e instanceof AppError && e.code === 'config_invalid' && !e.message.includes(SECRET) && e.cause === undefined,
      );
    }
  });
});

describe('Key Vault', () => {
  it('reads the connection string from the named secret; errors name the secret, never the value', async () => {
    const asked: string[] = [];
    const reader: SecretReader = {
      getSecret: (n) => (asked.push(n), Promise.resolve({ value: `h.example:6380,password=${SECRET},ssl=True` })),
    };
    assert.deepEqual(await readRedisSecret(reader, 'redis-conn'), {
      host: 'h.example',
      port: 6380,
      password: SECRET,
      tls: { servername: 'h.example' },
    });
    assert.deepEqual(asked, ['redis-conn']);
    const junk: SecretReader = { getSecret: () => Promise.resolve({ value: `not a connection string ${SECRET}` }) };
    await assert.rejects(
      readRedisSecret(junk, 'redis-conn'),
      (e: AppError) => e.code === 'config_invalid' && e.message.includes('redis-conn') && !e.message.includes(SECRET),
    );
    const down: SecretReader = {
      getSecret: () => Promise.reject(Object.assign(new Error('Forbidden'), { statusCode: 403 })),
    };
    await assert.rejects(
      readRedisSecret(down, 'redis-conn'),
      (e: AppError) => e.code === 'dependency_unavailable' && /HTTP 403/.test(e.message),
    );
  });

  it('connects with the secret from Key Vault, degrading and retrying while Key Vault fails', async () => {
    const server = await OwnRedis.start(['--requirepass', SECRET]);
    cleanups.push(() => server.kill());
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const logger = recordingLogger();
    let calls = 0;
    const reader: SecretReader = {
      getSecret: (name) => {
        assert.equal(name, 'redis-conn');
        return ++calls === 1
          ? Promise.reject(Object.assign(new Error('Service Unavailable'), { statusCode: 503 }))
          : Promise.resolve({ value: `127.0.0.1:${server.port},password=${SECRET},ssl=False,abortConnect=False` });
      },
    };
    const settings = testConfig({
      KEY_VAULT_URL: 'https://kv.vault.azure.net',
      REDIS_SECRET_NAME: 'redis-conn',
      REDIS_KEY_PREFIX: testPrefix('kv'),
      REDIS_TIMEOUT_MS: '250',
    });
    const provider: CachedContextProvider = await createContextProvider(settings, {
      secretReader: reader,
      timers,
      logger,
    });
    cleanups.push(() => provider.dispose());
    const ev = () => parsePaymentEvent(validEvent({ transactionId: `kv-${Math.random()}` }));
    assert.equal((await provider.lookup(ev())).cache, 'degraded', 'no store until Key Vault answers');
    assert.deepEqual(timers.delays, [1000], 'retry scheduled');
    clock.advance(1000);
    timers.runDue();
    await eventually(() => provider.description === 'redis (key vault)', 5000, 'setup retry');
    await eventually(async () => (await provider.lookup(ev())).cache !== 'degraded', 5000, 'connected lookups');
    assert.equal(calls, 2);
    const log = logger.lines.join('\n');
    assert.ok(log.includes('context store: redis (key vault)'));
    assert.ok(log.includes('HTTP 503'));
    assert.ok(!log.includes(SECRET), 'the connection string never reaches the log');
  });
});

describe('Key Vault through the real SecretClient (local HTTPS vault, injected credential)', () => {
  it('answers the vault challenge with a token for the vault, reads the secret and connects', async () => {
    const redis = await OwnRedis.start(['--requirepass', SECRET]);
    cleanups.push(() => redis.kill());
    const vault = await startKeyVaultPeer(() => `redis://:${encodeURIComponent(SECRET)}@127.0.0.1:${redis.port}`);
    cleanups.push(() => vault.close());
    const scopes: string[] = [];
    const credential: TokenCredential = {
      getToken: (s, o) => (
        scopes.push(`${[s].flat().join(' ')} tenant=${o?.tenantId ?? ''}`),
        Promise.resolve({ token: 'kv-token', expiresOnTimestamp: Date.now() + 3_600_000 })
      ),
    };
    const logger = recordingLogger();
    const settings = testConfig({
      KEY_VAULT_URL: vault.url,
      REDIS_SECRET_NAME: 'redis-conn',
      REDIS_KEY_PREFIX: testPrefix('kv2'),
      REDIS_TIMEOUT_MS: '250',
    });
    const provider = await createContextProvider(settings, {
      credential,
      logger,
      secretClientOptions: vault.secretClientOptions,
    });
    cleanups.push(() => provider.dispose());
    assert.deepEqual(vault.seen, ['GET /secrets/redis-conn/ anonymous', 'GET /secrets/redis-conn/ Bearer kv-token']);
    assert.deepEqual(scopes, ['https://vault.azure.net/.default tenant=tenant-1']);
    assert.notEqual(
      (await provider.lookup(parsePaymentEvent(validEvent({ transactionId: 'kv2-1' })))).cache,
      'degraded',
    );
    assert.ok(
      !logger.lines.join('\n').includes(SECRET) && !logger.lines.join('\n').includes(encodeURIComponent(SECRET)),
    );
  });
});
