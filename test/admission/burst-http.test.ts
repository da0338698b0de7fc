/**
 * A burst on a freshly started instance (own process, default settings plus Redis for the user
 * context, as `npm start` with `REDIS_URL`; the bundled model; the local Functions host): 500 concurrent
 * valid `POST /api/score` requests all get 200, three rounds in a row. Before the admission redesign,
 * the 50 ms deadline started before the context lookup and ran out while the busy event loop brought
 * the Redis answer back: on the 2-core dev machine 63, 96 and 20 of the 500 got 503 `deadline_exceeded`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sharedEngine } from '../../lib/app';
import type { LocalHost } from '../../local/host';
import { validEvent } from '../support/events';
import { testRedis } from '../support/redis';
import { startServiceHost } from '../inference/support/service-host';
import { postFresh } from './support/post';

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

describe('a burst on a fresh instance (bundled model)', () => {
  it('serves 500 concurrent valid requests, all 200, three rounds in a row', async () => {
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 500 }, (_, i) =>
          postFresh(
            `${host.url}/api/score`,
            JSON.stringify(validEvent({ transactionId: `burst-${round}-${i}`, userId: `u-${i % 50}` })),
          ),
        ),
      );
      const refused = answers.filter((a) => a.status !== 200);
      assert.equal(
        refused.length,
        0,
        `round ${round}: ${refused.length} refused, e.g. ${JSON.stringify(refused[0]?.json)}`,
      );
      for (const a of answers) assert.equal(typeof a.json['score'], 'number');
    }
    const stats = (await sharedEngine()).admissionStats;
    assert.equal(stats?.refused, 0);
    assert.equal(stats?.inflight, 0, 'every admission was released');
  });
});
