/** The tiered context provider on real Redis: hit / miss / degraded, corrupted values, single-flight, invalidation. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { testConfig } from '../support/config';
import type { CachedContextProvider } from '../../lib/context/cached-context-provider';
import { RedisProfileSource, type ContextSource } from '../../lib/context/context-source';
import { createContextProvider, type ContextProviderDeps } from '../../lib/context/create-context-provider';
import type { ContextEvents } from '../../lib/context/events';
import { ContextKeys } from '../../lib/context/keys';
import { seedProfiles } from '../../lib/context/profile-seeder';
import { syntheticProfile } from '../../lib/context/synthetic-profiles';
import { parsePaymentEvent, type PaymentEvent } from '../../lib/domain/payment-event';
import { validEvent } from '../support/events';
import { baseRedisOptions } from '../../lib/platform/redis/connection';
import { cleanup, eventually, recordingLogger, REDIS_PORT, testClient, testPrefix } from './support';

let admin: Redis;
const prefixes: string[] = [];
const providers: CachedContextProvider[] = [];
before(async () => {
  admin = await testClient();
});
after(async () => {
  for (const p of providers) await p.dispose();
  for (const p of prefixes) await cleanup(admin, p);
  admin.disconnect();
});

let tx = 0;
const event = (userId: string, over: Record<string, unknown> = {}): PaymentEvent =>
  parsePaymentEvent(validEvent({ userId, transactionId: `tx-${++tx}`, ...over }));

async function setup(name: string, deps: ContextProviderDeps = {}, prefix = testPrefix(name)) {
  prefixes.push(prefix);
  const settings = testConfig({ REDIS_KEY_PREFIX: prefix, REDIS_TIMEOUT_MS: '250' });
  const provider = await createContextProvider(settings, { redis: await testClient(), ...deps });
  providers.push(provider);
  const keys = new ContextKeys(prefix);
  return { provider, keys, prefix, origin: new RedisProfileSource(admin, keys) };
}

/** Counts origin calls of a source. */
function counting(inner: ContextSource): ContextSource & { calls: number } {
  const s = {
    calls: 0,
    load: (u: string, sid?: string) => {
      s.calls++;
      return inner.load(u, sid);
    },
  };
  return s;
}

describe('cached context provider (Redis)', () => {
  it('answers miss from the origin, then hit from L1, then hit from L2 on a fresh instance', async () => {
    const { provider, origin, prefix } = await setup('flow');
    await origin.put('alice', syntheticProfile(7));
    const first = await provider.lookup(event('alice'));
    assert.equal(first.cache, 'miss');
    assert.deepEqual(first.context.profile, syntheticProfile(7));
    assert.equal(first.context.velocity.count24h, 0);
    const second = await provider.lookup(event('alice'));
    assert.equal(second.cache, 'hit');
    assert.equal(second.context.velocity.count24h, 1, 'velocity sees the first payment');
    await eventually(
      async () => (await admin.exists(new ContextKeys(prefix).ctx('alice', 'sess-1').key)) === 1,
      2000,
      'L2 write',
    );
    const other = await setup('flow', {}, prefix);
    const third = await other.provider.lookup(event('alice'));
    assert.equal(third.cache, 'hit', 'from L2');
    assert.deepEqual(third.context.profile, syntheticProfile(7));
    assert.equal(third.context.velocity.count24h, 2, 'velocity is shared');
  });

  it('serves profiles written by the seed script (npm run seed:profiles)', async () => {
    const { provider, keys } = await setup('seed');
    assert.equal(await seedProfiles(admin, keys, 25, 10), 25);
    const r = await provider.lookup(event('user-24'));
    assert.deepEqual([r.cache, r.context.profile], ['miss', syntheticProfile(24)]);
  });

  it('caches a user without a profile too', async () => {
    const { provider } = await setup('nobody');
    assert.deepEqual(await provider.lookup(event('ghost')).then((r) => [r.cache, r.context.profile]), ['miss', null]);
    assert.deepEqual(await provider.lookup(event('ghost')).then((r) => [r.cache, r.context.profile]), ['hit', null]);
  });

  it('treats a corrupted or foreign L2 value as a miss, reports it, and rewrites it', async () => {
    const corrupt: string[] = [];
    const { provider, keys, origin } = await setup('corrupt', { on: { corrupt: (e) => corrupt.push(e.reason) } });
    await origin.put('bob', syntheticProfile(8));
    const key = keys.ctx('bob', 'sess-1').key;
    await admin.set(key, Buffer.from('CX\x01\x01garbage-garbage-garbage', 'latin1'));
    const r = await provider.lookup(event('bob'));
    assert.equal(r.cache, 'miss');
    assert.deepEqual(r.context.profile, syntheticProfile(8));
    assert.deepEqual(corrupt, ['bad_length']);
    await admin.set(keys.ctx('carol', 'sess-1').key, '{"profile":"plain json from someone else"}');
    assert.equal((await provider.lookup(event('carol'))).cache, 'miss');
    assert.deepEqual(corrupt, ['bad_length', 'bad_magic']);
    await eventually(
      async () =>
        ((await admin.getBuffer(key))?.subarray(0, 2).toString() ?? '') === 'CX' && (await admin.strlen(key)) > 30,
      2000,
      'rewrite',
    );
  });

  it('makes exactly one origin call for 100 concurrent misses of one key (single-flight)', async () => {
    const prefix = testPrefix('flight');
    const source = counting(new RedisProfileSource(admin, new ContextKeys(prefix)));
    const { provider, origin } = await setup('flight', { source }, prefix);
    await origin.put('dave', syntheticProfile(9));
    const results = await Promise.all(Array.from({ length: 100 }, () => provider.lookup(event('dave'))));
    assert.equal(source.calls, 1);
    for (const r of results) {
      assert.equal(r.cache, 'miss');
      assert.deepEqual(r.context.profile, syntheticProfile(9));
    }
    assert.equal((await provider.lookup(event('dave'))).cache, 'hit');
    assert.equal(source.calls, 1);
  });

  it('invalidates both tiers on a profile write, and other instances drop their L1 entry (pub/sub)', async () => {
    const { provider: a, prefix, keys } = await setup('pubsub');
    const { provider: b } = await setup('pubsub', {}, prefix);
    await a.writeProfile('erin', syntheticProfile(10));
    for (const p of [a, b]) await p.lookup(event('erin'));
    assert.equal((await b.lookup(event('erin'))).cache, 'hit');
    const updated = { ...syntheticProfile(10), homeCountry: 'JP' };
    await a.writeProfile('erin', updated);
    assert.equal(await admin.exists(keys.ctx('erin', 'sess-1').key), 0, 'L2 dropped');
    await eventually(
      async () => (await b.lookup(event('erin'))).context.profile?.homeCountry === 'JP',
      3000,
      'B to see the new profile',
    );
    assert.equal((await a.lookup(event('erin'))).context.profile?.homeCountry, 'JP');
  });

  it('degrades to default context with velocity when the origin fails', async () => {
    const degraded: string[] = [];
    const failing: ContextSource = { load: () => Promise.reject(new Error('origin down')) };
    const { provider } = await setup('origin', { source: failing, on: { degraded: (e) => degraded.push(e.reason) } });
    await provider.lookup(event('frank'));
    const r = await provider.lookup(event('frank'));
    assert.equal(r.cache, 'degraded');
    assert.equal(r.context.profile, null);
    assert.equal(r.context.velocity.count24h, 1);
    assert.deepEqual(degraded, ['origin', 'origin']);
  });
});

/** A client not connected yet: the provider connects it, so it sees (and logs) the connection. */
function lazyClient(): Redis {
  const c = new Redis({ ...baseRedisOptions(250), port: REDIS_PORT, host: '127.0.0.1' });
  c.on('error', () => undefined);
  return c;
}

describe('context store connection reports (Redis)', () => {
  it('a graceful stop does not log a lost connection; a real loss does', async () => {
    const stopped = recordingLogger();
    const graceful = await createContextProvider(testConfig({ REDIS_KEY_PREFIX: testPrefix('stop') }), {
      redis: lazyClient(),
      logger: stopped,
    });
    assert.ok(
      stopped.lines.some((l) => l.includes('context store: connected')),
      stopped.lines.join('\n'),
    );
    await graceful.dispose();
    assert.ok(!stopped.lines.some((l) => l.includes('connection lost')), stopped.lines.join('\n'));

    const lost = recordingLogger();
    const client = lazyClient();
    const provider = await createContextProvider(testConfig({ REDIS_KEY_PREFIX: testPrefix('lost') }), {
      redis: client,
      logger: lost,
    });
    providers.push(provider);
    client.disconnect(); // not through dispose: the connection goes away under the provider
    await eventually(
      () => lost.lines.some((l) => l.includes('context store: connection lost; scoring goes on degraded')),
      3000,
      'the connection-lost log line',
    );
  });
});

describe('in-process store (no Redis configured)', () => {
  it('serves miss then hit, counts velocity, and says so in the log', async () => {
    const logger = recordingLogger();
    const events: Partial<ContextEvents> = {};
    const provider = await createContextProvider(testConfig({}), { logger, on: events });
    providers.push(provider);
    assert.equal(provider.description, 'in-process');
    assert.ok(logger.lines.some((l) => l.includes('context store: in-process')));
    assert.equal((await provider.lookup(event('gina'))).cache, 'miss');
    const r = await provider.lookup(event('gina'));
    assert.equal(r.cache, 'hit');
    assert.equal(r.context.velocity.count1m, 1);
    await provider.writeProfile('gina', syntheticProfile(3));
    assert.deepEqual((await provider.lookup(event('gina'))).context.profile, syntheticProfile(3));
  });
});
