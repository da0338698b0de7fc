import type { Redis } from 'ioredis';
import type { ContextKeys } from './keys';
import { syntheticProfile, syntheticUserId } from './synthetic-profiles';

/**
 * Writes synthetic profiles for users `user-0` … `user-{count-1}` under `profile:{userId}` (the default
 * origin of the context cache), in pipelined batches, and drops their cached contexts so the next lookup
 * reads the new profiles.
 * @param batch profiles per round trip; default 1000.
 * @returns the number of profiles written.
 */
export async function seedProfiles(client: Redis, keys: ContextKeys, count: number, batch = 1000): Promise<number> {
  for (let start = 0; start < count; start += batch) {
    const p = client.pipeline();
    for (let i = start; i < Math.min(count, start + batch); i++) {
      const userId = syntheticUserId(i);
      p.set(keys.profile(userId), JSON.stringify(syntheticProfile(i)));
      p.del(keys.ctx(userId).key, keys.ctxIndex(userId));
    }
    const results = await p.exec();
    const failed = results?.find(([err]) => err !== null);
    if (failed !== undefined) throw failed[0];
  }
  return count;
}
