/**
 * Redis outage under concurrent load, through the engine (`createEngine` → `engine.score`): the test's own
 * redis-server is killed, restarted, then frozen (SIGSTOP) and resumed. Every call must succeed; calls
 * made (started and finished) while Redis is down or frozen answer `cache: "degraded"`; normal answers
 * come back without a restart of the engine.
 */
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { createEngine } from '../../lib/app';
import { testConfig } from '../support/config';
import { RedisProfileSource } from '../../lib/context/context-source';
import { createContextProvider } from '../../lib/context/create-context-provider';
import type { DegradedReason } from '../../lib/context/events';
import { ContextKeys } from '../../lib/context/keys';
import { baseRedisOptions, MAX_RECONNECT_DELAY_MS } from '../../lib/platform/redis/connection';
import { syntheticProfile } from '../../lib/context/synthetic-profiles';
import type { Engine } from '../../lib/engine';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { silentLogger } from '../../lib/platform/logger';
import { validEvent } from '../support/events';
import { fakeBackendFactory, fakeModelSource } from './fake-model';
import { eventually, OwnRedis, testPrefix } from './support';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('Redis outage', () => {
  it('keeps scoring (degraded) while Redis is down or frozen, and recovers without a restart', async () => {
    const server = await OwnRedis.start();
    cleanups.push(() => server.kill());
    const prefix = testPrefix('outage');
    const seed = new Redis({ port: server.port, host: '127.0.0.1' });
    const origin = new RedisProfileSource(seed, new ContextKeys(prefix));
    for (let u = 0; u < 20; u++) await origin.put(`u${u}`, syntheticProfile(u));
    seed.disconnect();

    const reasons = new Set<DegradedReason>();
    const config = testConfig({
      REDIS_URL: `redis://127.0.0.1:${server.port}`,
      REDIS_KEY_PREFIX: prefix,
      REDIS_TIMEOUT_MS: '50',
    });
    const engine: Engine = await createEngine(config, {
      logger: silentLogger,
      modelSource: fakeModelSource,
      backendFactory: fakeBackendFactory,
      contextDeps: { on: { degraded: (e) => reasons.add(e.reason) } },
    });
    cleanups.push(() => engine.dispose());
    await engine.start();

    let phase = 'up';
    let stop = false;
    /** Each call's phase when it started and when it ended (a call may straddle a change). */
    const results: { phase: string; end: string; cache: string }[] = [];
    const failures: unknown[] = [];
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const p = phase;
        try {
          const r = await engine.score(validEvent({ userId: `u${(w * 7 + i) % 20}`, transactionId: `o-${w}-${i}` }));
          results.push({ phase: p, end: phase, cache: r.cache });
        } catch (err) {
          failures.push(err);
        }
        await tick();
      }
    };
    const workers = Array.from({ length: 16 }, (_, w) => worker(w));
    const count = (ph: string, pred: (c: string) => boolean = () => true) =>
      results.filter((r) => r.phase === ph && pred(r.cache)).length;
    const within = (ph: string, pred: (c: string) => boolean) =>
      results.filter((r) => r.phase === ph && r.end === ph && pred(r.cache)).length;
    try {
      await eventually(() => count('up') >= 200, 10_000, 'load while up');
      assert.ok(count('up', (c) => c === 'hit') > 0, 'hits while up');

      await server.kill();
      phase = 'down';
      await eventually(() => count('down') >= 300, 10_000, 'load while down');

      phase = 'restarting';
      await server.start();
      phase = 'up-again';
      // the bound is a wait limit for a loaded machine, not a claim: how soon the client comes back is
      // its reconnect schedule, checked below without a clock
      await eventually(
        () => count('up-again', (c) => c !== 'degraded') > 0,
        20_000,
        'normal answers after the restart',
      );

      await server.signal('SIGSTOP');
      phase = 'frozen';
      await eventually(() => count('frozen') >= 100, 10_000, 'load while frozen');
      await server.signal('SIGCONT');
      phase = 'resumed';
      await eventually(() => count('resumed', (c) => c !== 'degraded') > 0, 5000, 'normal answers after resuming');
    } finally {
      stop = true;
      await server.signal('SIGCONT');
      await Promise.all(workers);
    }
    assert.deepEqual(failures, [], 'every call succeeded (HTTP 200)');
    assert.equal(
      within('down', (c) => c !== 'degraded'),
      0,
      'every call made while down is degraded',
    );
    assert.equal(
      within('frozen', (c) => c !== 'degraded'),
      0,
      'every call made while frozen is degraded',
    );
    assert.ok(
      within('frozen', (c) => c === 'degraded') >= 50,
      'calls complete while Redis is frozen: none waits on it',
    );
    assert.ok(reasons.has('unavailable') || reasons.has('error'), 'down: no connection');
    assert.ok(reasons.has('timeout'), 'frozen: over the time budget');
  });

  it('retries the connection at least once a second, however long Redis was away', () => {
    const retry = baseRedisOptions(50).retryStrategy as (times: number) => number;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (times) => {
        const ms = retry(times);
        return ms > 0 && ms <= MAX_RECONNECT_DELAY_MS && ms === Math.min(50 * 2 ** Math.min(times, 10), 1000);
      }),
    );
    assert.equal(MAX_RECONNECT_DELAY_MS, 1000);
  });

  it('clears L1 after the invalidation subscription reconnects (invalidations may have been missed)', async () => {
    const server = await OwnRedis.start();
    cleanups.push(() => server.kill());
    const prefix = testPrefix('resync');
    const config = testConfig({
      REDIS_URL: `redis://127.0.0.1:${server.port}`,
      REDIS_KEY_PREFIX: prefix,
      REDIS_TIMEOUT_MS: '250',
    });
    let connected = 0;
    const provider = await createContextProvider(config, {
      on: { connection: (e) => void (e.state === 'ready' && connected++) },
    });
    cleanups.push(() => provider.dispose());
    const ev = (i: number) => parsePaymentEvent(validEvent({ userId: 'hana', transactionId: `r-${i}` }));
    await provider.lookup(ev(1));
    assert.equal((await provider.lookup(ev(2))).cache, 'hit', 'in L1');
    await server.kill();
    await server.start(); // empty: L2 is gone too
    // without the resync every answer after the restart would be an L1 hit (L1 TTL 30 s); with it, one misses
    let n = 3;
    await eventually(
      async () => (await provider.lookup(ev(n++))).cache === 'miss',
      5000,
      'a miss after the reconnect (L1 cleared)',
    );
    assert.ok(connected >= 2, 'reconnected');
  });
});
