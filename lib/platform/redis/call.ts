import type { Redis } from 'ioredis';
import { AppError } from '../../errors/errors';

/** Runs one Redis call on a store's client; failures surface as a transient `dependency_unavailable`. */
export type RedisCall = <T>(fn: (redis: Redis) => Promise<T>) => Promise<T>;

/**
 * The call wrapper of a store on the shared Redis client: runs `fn` on the client, and turns any failure,
 * including a client that is not set up yet, into `dependency_unavailable` ("The {what} (Redis) is
 * unavailable.", transient, retry after 1 s) with the failure as its cause.
 * @param client the engine's shared client, or `undefined` while it is not set up yet.
 * @param what the store's name in the message, e.g. `fleet store`.
 */
export function redisCall(client: () => Redis | undefined, what: string): RedisCall {
  return async (fn) => {
    const redis = client();
    try {
      if (redis === undefined) throw new Error('Redis is not set up yet');
      return await fn(redis);
    } catch (err) {
      throw new AppError('dependency_unavailable', `The ${what} (Redis) is unavailable.`, {
        cause: err,
        transient: true,
        retryAfterSec: 1,
      });
    }
  };
}
