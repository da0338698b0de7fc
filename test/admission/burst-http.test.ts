/**
 * A burst on a freshly started instance (own process, default settings, the bundled model, the local
 * Functions host): 500 concurrent valid `POST /api/score` requests all get 200, three rounds in a row.
 * Before the admission redesign, the deadline clock ran out in the busy event loop and most of them got
 * 503 `deadline_exceeded`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sharedEngine } from '../../lib/app';
import type { LocalHost } from '../../local/host';
import { validEvent } from '../support/events';
import { startServiceHost } from '../inference/support/service-host';
import { postFresh } from './support/post';

let host: LocalHost;

before(async () => {
  Object.assign(process.env, { LOG_LEVEL: 'error' });
  host = await startServiceHost();
});
after(async () => {
  await host.dispose();
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
