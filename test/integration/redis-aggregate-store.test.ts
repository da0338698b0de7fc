/**
 * The Redis aggregate store on the shared test Redis (127.0.0.1:6379, a key prefix of its own, deleted after):
 * the shared contract with one script per entity and with one script per payment; both equal the in-process
 * store on random sequences; script calls per payment; key TTLs; a hot entity's bounded keys and memory; no raw
 * value in any key name, field, value or member; the NOSCRIPT fallback.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { MemoryAggregateStore } from '../../lib/signals/memory-aggregate-store';
import { RedisAggregateStore, type RedisAggregateStoreOptions } from '../../lib/signals/redis-aggregate-store';
import {
  agg,
  DAY,
  entity,
  HOUR,
  input,
  inputsOf,
  MIN,
  paymentSteps,
  planOf,
  PROPERTY_PLAN,
  T0,
} from '../contract/aggregate-fixtures';
import { aggregateStoreContract } from '../contract/aggregate-store.contract';
import { cleanup, testClient } from '../context/support';

const prefix = `test:sig:${randomUUID().slice(0, 8)}:`;
let client: Redis | undefined;
before(async () => {
  client = await testClient();
});
after(async () => {
  if (client === undefined) return;
  await cleanup(client, prefix);
  client.disconnect();
});
const redis = (): Redis => {
  if (client === undefined) throw new Error('the Redis client is not open');
  return client;
};

let stores = 0;
/** A store with a key prefix of its own (under the suite's prefix). */
const make = (o: Partial<RedisAggregateStoreOptions> = {}): RedisAggregateStore =>
  new RedisAggregateStore(redis(), { prefix: `${prefix}${++stores}:`, ...o });

aggregateStoreContract('Redis, one script per entity', () => make({ oneScript: false }));
aggregateStoreContract('Redis, one script per payment', () => make({ oneScript: true }));

/** Every key under a prefix. */
async function keysUnder(p: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis().scan(cursor, 'MATCH', `${p}*`, 'COUNT', 1000);
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out;
}

describe('RedisAggregateStore', () => {
  it('equals the in-process store on random payments, in both modes (property)', async () => {
    await fc.assert(
      fc.asyncProperty(paymentSteps, async (steps) => {
        const memory = new MemoryAggregateStore();
        const perEntity = make();
        const one = make({ oneScript: true });
        for (const [k, i] of inputsOf(steps).entries()) {
          const want = [...(await memory.record(PROPERTY_PLAN, i))];
          assert.deepEqual([...(await perEntity.record(PROPERTY_PLAN, i))], want, `payment ${k}, per entity`);
          assert.deepEqual([...(await one.record(PROPERTY_PLAN, i))], want, `payment ${k}, one script`);
        }
      }),
      { numRuns: 25 },
    );
  });

  it('makes one script call per entity, or one per payment with oneScript, and none without entities', async () => {
    const plan = planOf(
      { key: ['userId'], aggregates: [agg('u', 'count', HOUR)] },
      { key: ['email'], aggregates: [agg('e', 'count', HOUR), agg('e2', 'sum', DAY)] },
      { key: ['ipAddress'], aggregates: [agg('i', 'count', HOUR)] },
    );
    const per = make();
    const one = make({ oneScript: true });
    const ents = [entity('u'), entity('e'), entity('i')];
    for (const s of [per, one]) {
      await s.record(plan, input(plan, { at: T0, entities: ents }));
      await s.record(plan, input(plan, { at: T0 + 1, entities: [undefined, undefined, undefined] }));
    }
    assert.equal(per.scriptCalls, 3);
    assert.equal(one.scriptCalls, 1);
    assert.deepEqual(
      [...(await one.record(plan, input(plan, { at: T0 + 2, entities: ents, amount: 2 })))],
      [2, 2, 12, 2],
      'one script call answers every entity',
    );
  });

  it('issues the scripts of one payment in the same tick: auto-pipelining sends them in one write', async () => {
    const plan = planOf(
      { key: ['userId'], aggregates: [agg('u', 'count', HOUR)] },
      { key: ['email'], aggregates: [agg('e', 'count', HOUR)] },
      { key: ['ipAddress'], aggregates: [agg('i', 'count', HOUR)] },
    );
    const s = make();
    const before = redis().autoPipelineQueueSize;
    const pending = s.record(plan, input(plan, { at: T0, entities: [entity('u'), entity('e'), entity('i')] }));
    assert.equal(redis().autoPipelineQueueSize - before, 3, 'three EVALSHA queued in one auto-pipeline');
    assert.deepEqual([...(await pending)], [1, 1, 1]);
  });

  it('sets the TTL of every key to the longest window + its bucket + 1 min, never shortened', async () => {
    const s = make();
    const long = planOf({ key: ['userId'], aggregates: [agg('c1h', 'count', HOUR), agg('s24h', 'sum', DAY)] });
    const short = planOf({ key: ['userId'], aggregates: [agg('c15m', 'count', 15 * MIN)] });
    const u = entity('user');
    await s.record(long, input(long, { at: T0, entities: [u] }));
    const ttl = DAY + DAY / 12 + MIN;
    const keys = s.keysOf('userId', u);
    for (const k of keys) {
      const left = await redis().pttl(k);
      assert.ok(left > ttl - 30_000 && left <= ttl, `${k.slice(-2)}: ${left} ms`);
    }
    await s.record(short, input(short, { at: T0 + 1, entities: [u] }));
    for (const k of keys) assert.ok((await redis().pttl(k)) > ttl - 30_000, `${k.slice(-2)} kept its longer TTL`);
    const fresh = entity('user');
    await s.record(short, input(short, { at: T0, entities: [fresh] }));
    const shortTtl = 15 * MIN + (15 * MIN) / 12 + MIN;
    for (const k of s.keysOf('userId', fresh)) {
      const left = await redis().pttl(k);
      assert.ok(left > shortTtl - 30_000 && left <= shortTtl, `${k.slice(-2)}: ${left} ms`);
    }
  });

  it('keeps a hot entity bounded: 5 000 payments leave a fixed ring, 1 000 records, flat memory', async () => {
    const s = make();
    const plan = planOf({
      key: ['ipAddress'],
      aggregates: [
        agg('c', 'count', HOUR),
        agg('s', 'sum', HOUR),
        agg('a', 'avg', HOUR),
        agg('m', 'max', HOUR),
        agg('d', 'distinct', HOUR, 25),
      ],
    });
    const nat = entity('carrier-nat');
    const [a, x] = s.keysOf('ipAddress', nat);
    const usage = async () => {
      let total = 0;
      for (const k of [a, x]) total += Number(await redis().call('MEMORY', 'USAGE', k, 'SAMPLES', '0'));
      return total;
    };
    const run = async (from: number, to: number) => {
      for (let i = from; i < to; i += 250)
        await Promise.all(
          Array.from({ length: Math.min(250, to - i) }, (_, j) =>
            s.record(plan, input(plan, { at: T0 + (i + j) * 1000, entities: [nat], member: `user-${i + j}` })),
          ),
        );
    };
    await run(0, 2500);
    const half = await usage();
    await run(2500, 5000);
    const full = await usage();
    const fields = await redis().hkeys(a);
    assert.deepEqual(
      fields.filter((f) => !f.startsWith('=')).sort(),
      ['a', 'c', 'd', 'm', 's'],
      'one ring per aggregate',
    );
    assert.equal(fields.length, 5 + 1000 + 1, 'the rings, 1 000 answers and their count');
    assert.equal(await redis().zcard(x), 1000);
    for (const f of ['c', 's', 'a', 'm'])
      assert.ok(((await redis().hgetBuffer(a, f)) as Buffer).length <= 13 * 24, `ring ${f}: 13 entries at most`);
    assert.ok(((await redis().hgetBuffer(a, 'd')) as Buffer).length <= 13 * (12 + 25 * 11), 'distinct: 25 per entry');
    assert.ok(full <= half * 1.2, `memory does not grow with payments: ${half} → ${full} bytes`);
    assert.ok(full < 512 * 1024, `${full} bytes`);
    const last = await s.record(plan, input(plan, { at: T0 + 5000 * 1000, entities: [nat], member: 'u', amount: 10 }));
    // at T0 + 5000 s the window is the current 5 min bucket and the 12 before it: from T0 + 1200 s on
    assert.deepEqual([...last], [3801, 38010, 10, 10, 25]);
  });

  it('never stores a raw entity or distinct value in a key name, field, value or member', async () => {
    const p = `${prefix}raw-${randomUUID().slice(0, 8)}:`;
    const raw = ['alice@example.com', '203.0.113.77', 'fp_9f8e7d6c5b4a'];
    const plan = planOf(
      { key: ['email'], aggregates: [agg('e-ips', 'distinct', HOUR), agg('e-c', 'count', DAY)] },
      { key: ['ipAddress'], aggregates: [agg('ip-mails', 'distinct', DAY)] },
      { key: ['cardFingerprint', 'email'], aggregates: [agg('card-mail', 'count', HOUR)] },
    );
    for (const oneScript of [false, true]) {
      const s = new RedisAggregateStore(redis(), { prefix: p, oneScript });
      for (let k = 0; k < 3; k++) {
        const values = [raw[1], undefined, raw[0], undefined];
        await s.record(plan, {
          ...input(plan, { at: T0 + k, entities: [raw[0], raw[1], `${raw[2]}\u0000${raw[0]}`] }),
          values,
        });
      }
    }
    const keys = await keysUnder(p);
    assert.equal(keys.length, 6, 'three entities, two keys each');
    const seen: string[] = [...keys];
    for (const k of keys) {
      const type = await redis().type(k);
      if (type === 'hash') seen.push(...Object.entries(await redis().hgetall(k)).flat());
      else seen.push(...(await redis().zrange(k, '0', '-1')));
    }
    const leaks = seen.filter((v) => raw.some((r) => v.includes(r) || v.includes(r.slice(0, 8))));
    assert.deepEqual(leaks, []);
  });

  it('loads the script by EVAL when the server does not know it (NOSCRIPT), and rejects on other errors', async () => {
    let refused = 0;
    const failWith = (message: string) =>
      new Proxy(redis(), {
        get(target, key) {
          if (key === 'evalshaBuffer')
            return () => {
              refused++;
              return Promise.reject(new Error(message));
            };
          const v: unknown = Reflect.get(target, key, target);
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    const plan = planOf({ key: ['userId'], aggregates: [agg('c', 'count', HOUR)] });
    const s = new RedisAggregateStore(failWith('NOSCRIPT No matching script.'), { prefix: `${prefix}noscript:` });
    assert.deepEqual([...(await s.record(plan, input(plan, { at: T0, entities: ['u'] })))], [1]);
    assert.equal(refused, 1);
    const broken = new RedisAggregateStore(failWith('LOADING Redis is loading'), { prefix: `${prefix}noscript:` });
    await assert.rejects(broken.record(plan, input(plan, { at: T0, entities: ['u'] })), /LOADING/);
  });

  it('matches distinct members only at member boundaries (a fixed-width hash chosen to straddle)', async () => {
    const s = make({ hash: (v) => v.padEnd(2, '_').slice(0, 2) });
    const plan = planOf({ key: ['deviceId'], aggregates: [agg('d', 'distinct', HOUR)] });
    const got: number[] = [];
    for (const [k, m] of ['ab', 'ba', 'bb', 'ab'].entries())
      got.push((await s.record(plan, input(plan, { at: T0 + k, entities: ['dv'], member: m })))[0] as number);
    assert.deepEqual(got, [1, 2, 3, 3], '"bb" is not the middle of "abba"');
  });
});
