/**
 * The aggregate store of the engine: Redis when the context store is Redis (the same connection: auto-pipelining
 * sends a payment's aggregate scripts in the same write as its context lookup), else in process. While the Redis
 * client is not set up, or unreachable, there is none: the pipeline's aggregates then read 0 and the payment is
 * counted as degraded (lib/scoring/signals-stage.ts).
 */
import type { Redis } from 'ioredis';
import type { AggregateStore } from './aggregate-store';
import { MemoryAggregateStore } from './memory-aggregate-store';
import { RedisAggregateStore } from './redis-aggregate-store';

/** What {@link aggregateStoreOf} reads of the settings. */
export interface AggregateStoreSettings {
  /** Redis key prefix (`REDIS_KEY_PREFIX`). */
  readonly keyPrefix: string;
  readonly oneScript: boolean;
  readonly maxEntities: number;
}

/**
 * The store getter for the signals stage.
 * @param redis the engine's shared Redis client getter (`undefined`: no Redis configured, the in-process store).
 */
export function aggregateStoreOf(
  redis: (() => Redis | undefined) | undefined,
  settings: AggregateStoreSettings,
): () => AggregateStore | undefined {
  if (redis === undefined) {
    const memory = new MemoryAggregateStore({ maxEntities: settings.maxEntities });
    return () => memory;
  }
  let store: { client: Redis; store: RedisAggregateStore } | undefined;
  return () => {
    const client = redis();
    if (client === undefined || client.status !== 'ready') return undefined;
    if (store?.client !== client)
      store = {
        client,
        store: new RedisAggregateStore(client, { prefix: settings.keyPrefix, oneScript: settings.oneScript }),
      };
    return store.store;
  };
}
