/**
 * Bursts on a freshly started instance (default settings plus Redis for the user context, as `npm start`
 * with `REDIS_URL`; the bundled model; the local Functions host with host.json's HTTP throttles), the client
 * in its own process: 3 rounds × 500 concurrent valid `POST /api/score` on fresh connections, at the default
 * deadline (`REQUEST_DEADLINE_MS`, 1 s) and with `x-deadline-ms: 2000`. Every request is answered 200: a
 * burst of 500 is served well within a second, and a fresh instance refuses nothing before it has measured
 * its rate. No other status, no timeout, no reset, and the admission releases every request. How fast they
 * are served is the benchmark's (`npm run bench`, `small.burst`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sharedEngine } from '../../lib/app';
import type { LocalHost } from '../../local/host';
import { testRedis } from '../support/redis';
import { startServiceHost } from '../support/local-host';
import { burstInOwnProcess } from './support/burst-process';

let host: LocalHost;
const redis = testRedis();

before(async () => {
  Object.assign(process.env, {
    LOG_LEVEL: 'error',
    REDIS_URL: process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: redis.prefix,
  });
  host = await startServiceHost();
});
after(async () => {
  await host.dispose();
  await redis.cleanup();
});

describe('bursts on a fresh instance (bundled model), client in its own process', () => {
  for (const deadlineMs of [undefined, 2000]) {
    it(`answers every request 200 (${deadlineMs === undefined ? 'default deadline' : `x-deadline-ms ${deadlineMs}`})`, async () => {
      const f = await burstInOwnProcess(
        host.url,
        { n: 500, rounds: 3, requestTimeoutMs: 60_000, ...(deadlineMs === undefined ? {} : { deadlineMs }) },
        240_000,
      );
      assert.equal(f.sent, 1500);
      assert.equal(f.other, 0, `answers other than 200 and 503 + Retry-After: ${JSON.stringify(f.other_by_kind)}`);
      assert.deepEqual(f.refused_by_code, {}, 'no request was refused');
      assert.equal(f.ok, 1500, 'every request was served');
      process.stdout.write(`# burst ${deadlineMs ?? 'default'}: ${JSON.stringify(f)}\n`);
      assert.equal((await sharedEngine()).admissionStats?.deadline.backlog, 0, 'every admitted request was released');
    });
  }
});
