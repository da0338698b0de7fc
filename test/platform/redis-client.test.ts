/**
 * From a connection plan to client options (lib/platform/redis/client.ts): the URL's options, the Key Vault secret's,
 * an Entra token as the password with its user name and TLS; the credential is asked for only by the plans that
 * need it, and no error carries the secret.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AccessToken, TokenCredential } from '@azure/identity';
import { redisConnection, type RedisAccess } from '../../lib/platform/redis/client';
import { REDIS_SCOPE } from '../../lib/platform/redis/entra-auth';
import { FakeClock, FakeTimers } from '../context/support';

const SECRET = 'hunter2-do-not-log';

function access(over: Partial<RedisAccess> = {}): RedisAccess & { scopes: string[] } {
  const clock = new FakeClock();
  const scopes: string[] = [];
  const credential: TokenCredential = {
    getToken: (scope) => {
      scopes.push(String(scope));
      return Promise.resolve({ token: 'token-1', expiresOnTimestamp: clock.now() + 3_600_000 } as AccessToken);
    },
  };
  return { credential: () => credential, timers: new FakeTimers(clock), now: clock.now, ...over, scopes };
}

describe('Redis connection from a plan', () => {
  it('a URL gives its host, port, password and TLS, and asks for no credential', async () => {
    const a = access({ credential: () => assert.fail('no credential for a URL') });
    const c = await redisConnection({ mode: 'url', url: `rediss://:${SECRET}@cache.example:6380/2` }, a);
    assert.deepEqual(c.options, {
      host: 'cache.example',
      port: 6380,
      password: SECRET,
      db: 2,
      tls: { servername: 'cache.example' },
    });
    assert.equal(c.auth, undefined);
  });

  it('Key Vault gives the secret’s connection; a bad secret fails without its value', async () => {
    const asked: string[] = [];
    const good = access({
      secretReader: {
        getSecret: (n) => (asked.push(n), Promise.resolve({ value: `h.example:6380,password=${SECRET},ssl=True` })),
      },
    });
    const c = await redisConnection({ mode: 'keyvault', vaultUrl: 'https://v.example', secretName: 'redis-cs' }, good);
    assert.deepEqual(asked, ['redis-cs']);
    assert.equal(c.options.host, 'h.example');
    assert.equal(c.options.password, SECRET);
    const bad = access({ secretReader: { getSecret: () => Promise.resolve({ value: `junk ${SECRET}` }) } });
    await assert.rejects(
      redisConnection({ mode: 'keyvault', vaultUrl: 'https://v.example', secretName: 'redis-cs' }, bad),
      (err: Error) => err.message.includes('redis-cs') && !err.message.includes(SECRET),
    );
  });

  it('Entra gives the token as the password, the object id as the user, TLS, and the auth that refreshes it', async () => {
    const a = access();
    const c = await redisConnection({ mode: 'entra', host: 'r.example', port: 10000, username: 'oid-1' }, a);
    try {
      assert.deepEqual(a.scopes, [REDIS_SCOPE]);
      assert.deepEqual(c.options, {
        host: 'r.example',
        port: 10000,
        tls: { servername: 'r.example' },
        username: 'oid-1',
        password: 'token-1',
      });
      assert.ok(c.auth !== undefined);
      assert.equal(c.auth.password, 'token-1');
    } finally {
      c.auth?.dispose();
    }
  });
});
