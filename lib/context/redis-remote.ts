import type { Redis } from 'ioredis';
import type { ContextRemote } from './cached-context-provider';
import type { ContextSource } from './context-source';
import { RedisProfileSource } from './context-source';
import type { EntraTokenAuth } from '../platform/redis/entra-auth';
import type { ContextEvents } from './events';
import { RedisInvalidationBus } from './invalidation';
import type { ContextKeys } from './keys';
import { RedisContextCache } from './redis-cache';
import { RedisVelocityStore } from './redis-velocity';

/** Options of {@link createRedisRemote}. */
export interface RedisRemoteOptions {
  readonly keys: ContextKeys;
  /** L2 TTL, ms. */
  readonly ttlMs: number;
  /** `redis (url)`, `redis (entra)`, … */
  readonly description: string;
  /** Origin; default profiles in this Redis (`RedisProfileSource`). */
  readonly source?: ContextSource;
  /** Entra auth to re-AUTH both connections with at each token refresh. */
  readonly auth?: EntraTokenAuth;
  readonly now?: () => number;
  readonly maxEventsPerUser?: number;
  /** How long to wait for the first connection, ms; later connects happen in the background. */
  readonly connectWaitMs: number;
  readonly on?: Partial<ContextEvents>;
}

/**
 * The Redis-backed remote of the context provider, over `client` (owned from now on): L2 cache, velocity
 * script, profile origin and a pub/sub bus on a duplicate connection. Reports connection state changes (not the
 * close that `dispose` makes: a graceful stop does not report a lost connection).
 * Waits at most `connectWaitMs` for the first connection; the client keeps reconnecting in the background.
 */
export async function createRedisRemote(
  client: Redis,
  options: RedisRemoteOptions,
): Promise<ContextRemote & { readonly client: Redis }> {
  const { keys, on } = options;
  // the subscriber queues its one SUBSCRIBE until connected (bounded: a single command)
  const subscriber = client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, lazyConnect: true });
  let up = false;
  /** Set by dispose: a close we asked for is not a lost connection. */
  let closing = false;
  client.on('ready', () => {
    if (!up) on?.connection?.({ state: 'ready' });
    up = true;
  });
  client.on('close', () => {
    if (up && !closing) on?.connection?.({ state: 'lost' });
    up = false;
  });
  client.on('error', () => undefined); // reported through state changes; messages may name hosts, never secrets
  options.auth?.attach(client);
  options.auth?.attach(subscriber);

  const bus = new RedisInvalidationBus(client, subscriber, keys.channel);
  const now = options.now;
  const l2 = new RedisContextCache(client, {
    keys,
    ttlMs: options.ttlMs,
    ...(now === undefined ? {} : { now }),
    ...(on === undefined ? {} : { on }),
  });
  const velocity = new RedisVelocityStore(client, {
    keys,
    ...(options.maxEventsPerUser === undefined ? {} : { maxEventsPerUser: options.maxEventsPerUser }),
  });

  const waitFor = (p: Promise<unknown>): Promise<void> =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, options.connectWaitMs);
      p.then(
        () => (clearTimeout(t), resolve()),
        () => (clearTimeout(t), resolve()),
      );
    });
  if (client.status === 'wait') await waitFor(client.connect());
  await waitFor(bus.start());

  return {
    description: options.description,
    client,
    l2,
    velocity,
    source: options.source ?? new RedisProfileSource(client, keys),
    bus,
    available: () => client.status === 'ready',
    dispose: async () => {
      closing = true;
      options.auth?.dispose();
      await bus.dispose();
      try {
        // a QUIT not answered within 500 ms is cut by disconnect(), which rejects it: that rejection is expected
        if (client.status === 'ready')
          await Promise.race([client.quit().catch(() => undefined), new Promise((r) => setTimeout(r, 500))]);
      } finally {
        client.disconnect();
      }
    },
  };
}
