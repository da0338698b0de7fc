import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/** A client on the test Redis (127.0.0.1:6379 unless `TEST_REDIS_URL`), and a unique key prefix for one test. */
export function testRedis(): { redis: Redis; prefix: string; cleanup: () => Promise<void> } {
  const redis = new Redis(process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379', {
    lazyConnect: false,
    maxRetriesPerRequest: 2,
  });
  const prefix = `test:${randomUUID()}:`;
  return {
    redis,
    prefix,
    cleanup: async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
}
