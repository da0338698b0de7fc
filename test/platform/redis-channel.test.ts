/**
 * RedisChannelSubscription on the shared test Redis (a key prefix of its own): delivery on its channel only,
 * one pending subscription for concurrent callers, a reconnect reported after the connection is killed, a late
 * SUBSCRIBE dropped (a silent server, fake timers) so the next call starts again, and dispose.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import {
  RedisChannelSubscription,
  SUBSCRIBE_WAIT_MS,
  type RedisChannelOptions,
} from '../../lib/platform/redis/channel';
import { baseRedisOptions } from '../../lib/platform/redis/connection';
import { eventually, within } from '../support/eventually';
import { FakeClock, FakeTimers, REDIS_PORT, testPrefix } from '../context/support';

const prefix = testPrefix('channel');
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A connected client on the test Redis whose connections (and their duplicates) carry `name`. */
async function namedClient(name: string): Promise<Redis> {
  const c = new Redis({ ...baseRedisOptions(250), port: REDIS_PORT, host: '127.0.0.1', connectionName: name });
  c.on('error', () => undefined);
  await c.connect();
  cleanups.push(() => c.disconnect());
  return c;
}

/** A subscription that records what it hears, and how often it asked for the client (once per connection made). */
function recording(client: () => Redis | undefined, channel: string, options: RedisChannelOptions = {}) {
  const heard: string[] = [];
  let reconnects = 0;
  let made = 0;
  const onHeard = new Set<() => void>();
  const s = new RedisChannelSubscription(
    () => (made++, client()),
    channel,
    {
      onMessage: (text) => {
        heard.push(text);
        for (const f of onHeard) f();
      },
      onReconnect: () => {
        reconnects++;
        for (const f of onHeard) f();
      },
    },
    options,
  );
  cleanups.push(() => s.dispose());
  /** Resolves once `check` holds after a message or reconnect. */
  const until = (check: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const f = (): void => {
        if (!check()) return;
        onHeard.delete(f);
        resolve();
      };
      onHeard.add(f);
      f();
    });
  return { s, heard, until, reconnects: () => reconnects, made: () => made };
}

describe('RedisChannelSubscription', () => {
  it('delivers each message on its channel, in order, and none from another channel', async () => {
    const redis = await namedClient(`${prefix}delivery`);
    const r = recording(() => redis, `${prefix}changed`);
    assert.equal(await r.s.subscribe(), true);
    await redis.publish(`${prefix}other`, 'not ours');
    await redis.publish(`${prefix}changed`, 'a');
    await redis.publish(`${prefix}changed`, '{"b":1}');
    await within(
      r.until(() => r.heard.length >= 2),
      'two messages on the channel',
    );
    assert.deepEqual(r.heard, ['a', '{"b":1}']); // published after `not ours` on one connection: it came first if at all
  });

  it('shares one pending subscription between concurrent callers, and one connection', async () => {
    const redis = await namedClient(`${prefix}shared`);
    const r = recording(() => redis, `${prefix}shared`);
    const first = r.s.subscribe();
    const second = r.s.subscribe();
    assert.equal(second, first, 'the second caller gets the pending subscription');
    assert.deepEqual(await Promise.all([first, second]), [true, true]);
    assert.equal(await r.s.subscribe(), true);
    assert.equal(r.made(), 1, 'one connection made');
  });

  it('reports a reconnect (not the first connection) and hears the channel again after it', async () => {
    const name = `${prefix}reconnect`;
    const redis = await namedClient(name);
    const r = recording(() => redis, `${prefix}reconnect`);
    assert.equal(await r.s.subscribe(), true);
    assert.equal(r.reconnects(), 0, 'the first ready is no reconnect');
    const list = (await redis.client('LIST')) as string;
    const ids = list
      .split('\n')
      .filter((l) => l.includes(` name=${name} `) && / sub=1 /.test(l))
      .map((l) => /^id=(\d+) /.exec(l)?.[1]);
    assert.equal(ids.length, 1, `one subscriber connection named ${name}`);
    await redis.client('KILL', 'ID', String(ids[0]));
    await within(
      r.until(() => r.reconnects() === 1),
      'onReconnect after the subscriber connection was killed',
      10_000,
    );
    await eventually(
      async () => (await redis.publish(`${prefix}reconnect`, 'again'), r.heard.includes('again')),
      (v) => v,
      'a message heard after the resubscribe',
      10_000,
    );
    assert.equal(r.made(), 1, 'the same connection reconnected');
  });

  it('drops a connection not subscribed in time (default bound 2 s), so the next call starts again', async () => {
    const sockets: net.Socket[] = [];
    const connected = new Set<(s: net.Socket) => void>();
    const silent = net.createServer((sock) => {
      sockets.push(sock);
      for (const f of connected) f(sock);
    }); // accepts, never answers: the SUBSCRIBE stays queued
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          silent.close(() => resolve());
        }),
    );
    const nextSocket = (): Promise<net.Socket> =>
      new Promise((resolve) => {
        const f = (s: net.Socket): void => (connected.delete(f), resolve(s));
        connected.add(f);
      });
    const port = (silent.address() as net.AddressInfo).port;
    const base = new Redis({ ...baseRedisOptions(250), port, host: '127.0.0.1' });
    base.on('error', () => undefined);
    cleanups.push(() => base.disconnect());
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const r = recording(() => base, `${prefix}late`, { timers });

    const socket = nextSocket();
    const pending = r.s.subscribe();
    const sock = await within(socket, 'the subscriber connecting to the silent server');
    const closed = new Promise((resolve) => sock.once('close', resolve));
    assert.equal(SUBSCRIBE_WAIT_MS, 2000);
    assert.deepEqual(timers.delays, [SUBSCRIBE_WAIT_MS]);
    clock.advance(SUBSCRIBE_WAIT_MS);
    timers.runDue();
    assert.equal(await pending, false);
    await within(closed, 'the late connection closed', 10_000);

    const again = nextSocket();
    const retry = r.s.subscribe();
    assert.notEqual(retry, pending, 'a new subscription, not the failed one');
    await within(again, 'a new subscriber connection');
    assert.equal(r.made(), 2);
    r.s.dispose();
    assert.equal(await retry, false, 'a pending subscription disposed says false');
  });

  it('says false without a client, and after dispose without connecting', async () => {
    const none = recording(() => undefined, `${prefix}none`);
    assert.equal(await none.s.subscribe(), false);
    const redis = await namedClient(`${prefix}disposed`);
    const r = recording(() => redis, `${prefix}disposed`);
    assert.equal(await r.s.subscribe(), true);
    r.s.dispose();
    assert.equal(await r.s.subscribe(), false);
    assert.equal(r.made(), 1);
  });
});
