/**
 * Seeds synthetic user profiles into Redis for local use: `npm run seed:profiles -- [count]` (default
 * 10 000 users, `user-0` …). Uses `REDIS_URL` (default `redis://127.0.0.1:6379`) and `REDIS_KEY_PREFIX`.
 * Cached contexts of session-less keys are dropped; session keys expire within `CONTEXT_L2_TTL_SEC`.
 */
import { Redis } from 'ioredis';
import { configFromEnvironment } from '../lib/app';
import { ContextKeys } from '../lib/context/keys';
import { seedProfiles } from '../lib/context/profile-seeder';
import { parseRedisConnectionString } from '../lib/platform/redis/connection';

async function main(): Promise<void> {
  const config = configFromEnvironment();
  const count = Number(process.argv[2] ?? 10_000);
  if (!Number.isInteger(count) || count < 1) throw new Error('usage: seed-profiles [count ≥ 1]');
  const options = parseRedisConnectionString(config.redis.url ?? 'redis://127.0.0.1:6379');
  const client = new Redis({ ...options, lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  try {
    const t0 = performance.now();
    await seedProfiles(client, new ContextKeys(config.redis.keyPrefix), count);
    // host and port only: the URL may hold a password
    console.log(
      `seeded ${count} profiles into ${options.host ?? '?'}:${options.port ?? '?'} under "${config.redis.keyPrefix}profile:" in ${Math.round(performance.now() - t0)} ms`,
    );
  } finally {
    client.disconnect();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : 'seeding failed');
  process.exitCode = 1;
});
