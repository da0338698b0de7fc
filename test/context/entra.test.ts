/** Microsoft Entra token auth for Redis, with a credential passed in and fake clock/timers (no Azure here). */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { AccessToken, TokenCredential } from '@azure/identity';
import { Redis, type RedisOptions } from 'ioredis';
import { testConfig } from '../support/config';
import { createContextProvider } from '../../lib/context/create-context-provider';
import { EntraTokenAuth, REDIS_SCOPE, refreshDelayMs, type AuthTarget } from '../../lib/platform/redis/entra-auth';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { validEvent } from '../support/events';
import { eventually, FakeClock, FakeTimers, OwnRedis, recordingLogger, testPrefix } from './support';

const MIN = 60_000;
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A credential handing out `tok-1`, `tok-2`, … each valid `lifetimeMs` from the clock's now. */
function fakeCredential(clock: FakeClock, lifetimeMs = 60 * MIN) {
  const calls: string[] = [];
  let n = 0;
  let failNext = false;
  const credential: TokenCredential & { calls: string[]; failOnce(): void } = {
    calls,
    failOnce: () => void (failNext = true),
    getToken: (scopes) => {
      calls.push([scopes].flat().join(' '));
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error('ManagedIdentityCredential: no response'));
      }
      return Promise.resolve({
        token: `tok-${++n}`,
        expiresOnTimestamp: clock.now() + lifetimeMs,
      } satisfies AccessToken);
    },
  };
  return credential;
}

describe('Entra token refresh timing', () => {
  it('refreshes 5 min before expiry, or at refreshAfterTimestamp if sooner, or halfway through a short life', () => {
    const now = 1_000_000;
    assert.equal(refreshDelayMs({ token: 't', expiresOnTimestamp: now + 60 * MIN }, now, 5 * MIN), 55 * MIN);
    assert.equal(
      refreshDelayMs(
        { token: 't', expiresOnTimestamp: now + 60 * MIN, refreshAfterTimestamp: now + 30 * MIN },
        now,
        5 * MIN,
      ),
      30 * MIN,
    );
    assert.equal(refreshDelayMs({ token: 't', expiresOnTimestamp: now + 4 * MIN }, now, 5 * MIN), 2 * MIN);
    assert.equal(
      refreshDelayMs({ token: 't', expiresOnTimestamp: now - 1 }, now, 5 * MIN),
      1000,
      'never sooner than 1 s',
    );
  });

  it('re-AUTHs every attached connection with the new token, and retries a failed refresh', async () => {
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const credential = fakeCredential(clock);
    const failed: string[] = [];
    const auth = await EntraTokenAuth.create({
      credential,
      username: 'oid-1',
      now: clock.now,
      timers,
      on: { tokenRefreshFailed: (e) => failed.push(e.message) },
    });
    const sent: string[] = [];
    const target = (status: string): AuthTarget & { options: { password?: string } } => ({
      status,
      options: {},
      auth: (u, p) => (sent.push(`${status} ${u} ${p}`), Promise.resolve('OK')),
    });
    const [live, down] = [target('ready'), target('reconnecting')];
    auth.attach(live);
    auth.attach(down);
    assert.equal(live.options.password, 'tok-1');
    assert.deepEqual(credential.calls, [REDIS_SCOPE]);
    assert.deepEqual(timers.delays, [55 * MIN]);

    clock.advance(55 * MIN - 1);
    timers.runDue();
    assert.equal(credential.calls.length, 1, 'not a millisecond early');
    clock.advance(1);
    timers.runDue();
    await eventually(() => sent.length === 1, 1000, 're-AUTH');
    assert.deepEqual(sent, ['ready oid-1 tok-2'], 'only the live connection is re-AUTHed');
    assert.equal(down.options.password, 'tok-2', 'the other reconnects with the new token');
    assert.deepEqual(timers.delays, [55 * MIN]);

    credential.failOnce();
    clock.advance(55 * MIN);
    timers.runDue();
    await eventually(() => failed.length === 1, 1000, 'failure report');
    assert.deepEqual(timers.delays, [30_000], 'retried in 30 s');
    clock.advance(30_000);
    timers.runDue();
    await eventually(() => sent.length === 2, 1000, 'retry');
    assert.equal(sent[1], 'ready oid-1 tok-3');
    auth.dispose();
    assert.deepEqual(timers.delays, []);
  });
});

describe('Entra auth against a real redis-server (ACL user = object id, token = password)', () => {
  it('connects as the identity, re-AUTHs before expiry, and reconnects with the fresh token', async () => {
    const server = await OwnRedis.start();
    cleanups.push(() => server.kill());
    const admin = new Redis({ port: server.port, host: '127.0.0.1' });
    cleanups.push(async () => void admin.disconnect());
    await admin.call('ACL', 'SETUSER', 'oid-123', 'on', '>tok-1', '~*', '&*', '+@all');
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const credential = fakeCredential(clock);
    const logger = recordingLogger();
    const refreshed: number[] = [];
    let made: RedisOptions | undefined;
    const settings = testConfig({
      REDIS_HOST: `127.0.0.1:${server.port}`,
      REDIS_ENTRA_OBJECT_ID: 'oid-123',
      REDIS_KEY_PREFIX: testPrefix('entra'),
      REDIS_TIMEOUT_MS: '250',
    });
    const provider = await createContextProvider(settings, {
      credential,
      timers,
      now: clock.now,
      logger,
      on: { tokenRefreshed: (e) => refreshed.push(e.nextRefreshInMs) },
      // the local server speaks plain TCP: keep every option but TLS
      createClient: (o) => ((made = o), new Redis({ ...o, tls: undefined })),
    });
    cleanups.push(() => provider.dispose());
    assert.equal(provider.description, 'redis (entra)');
    assert.deepEqual(
      [made?.host, made?.port, made?.username, made?.password, made?.tls],
      ['127.0.0.1', server.port, 'oid-123', 'tok-1', { servername: '127.0.0.1' }],
    );
    const ev = () => parsePaymentEvent(validEvent({ transactionId: `e-${Math.random()}` }));
    assert.notEqual((await provider.lookup(ev())).cache, 'degraded');

    const authCalls = async () => Number(/cmdstat_auth:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
    const before = await authCalls();
    await admin.call('ACL', 'SETUSER', 'oid-123', '>tok-2');
    clock.advance(55 * MIN);
    timers.runDue();
    await eventually(() => refreshed.length === 1, 3000, 'token refresh');
    assert.equal((await authCalls()) - before, 2, 'AUTH on the command and the subscriber connections');

    await admin.call('ACL', 'SETUSER', 'oid-123', '<tok-1');
    await admin.call('CLIENT', 'KILL', 'USER', 'oid-123');
    await eventually(async () => (await provider.lookup(ev())).cache !== 'degraded', 5000, 'reconnect with tok-2');
    const log = logger.lines.join('\n');
    assert.ok(log.includes('context store: redis (entra)'));
    assert.ok(!/tok-\d/.test(log), 'no token in the log');
  });
});
