/**
 * Two instances' views of one store for a contract suite (the same object for an in-process store): opened before
 * the suite, disposed after it, and a bounded wait for what the other instance hears.
 */
import { after, before } from 'node:test';
import type { Redis } from 'ioredis';
import { eventually } from './eventually';
import { testRedis } from './redis';

/** Two views of one store, and how to clean up what they wrote. */
export interface StorePair<S> {
  readonly store: S;
  readonly other: S;
  readonly cleanup: () => Promise<void>;
}

/**
 * Opens the pair in the suite's `before` (then runs `opened`, e.g. to subscribe), disposes it in its `after`.
 * @returns the open pair (call it inside the tests).
 */
export function storePair<S extends { dispose(): Promise<void> }>(
  make: () => Promise<StorePair<S>>,
  opened: (pair: StorePair<S>) => Promise<void>,
): () => StorePair<S> {
  let pair: StorePair<S> | undefined;
  before(async () => {
    pair = await make();
    await opened(pair);
  });
  after(async () => {
    if (pair === undefined) return;
    await pair.store.dispose();
    if (pair.other !== pair.store) await pair.other.dispose();
    await pair.cleanup();
  });
  return () => {
    if (pair === undefined) throw new Error('the store pair is not open (used outside its suite)');
    return pair;
  };
}

/** Waits (bounded, for real I/O such as pub/sub delivery) until `check` holds. */
export async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  await eventually(
    () => Promise.resolve(check()),
    (ok) => ok,
    what,
    ms,
  );
}

/** A pair on the shared test Redis (own key prefix, cleaned up): each view on a connection of its own. */
export function redisPair<S>(open: (redis: Redis, prefix: string) => S): Promise<StorePair<S>> {
  const { redis, prefix, cleanup } = testRedis();
  const second = redis.duplicate();
  return Promise.resolve({
    store: open(redis, prefix),
    other: open(second, prefix),
    cleanup: async () => {
      second.disconnect();
      await cleanup();
    },
  });
}
