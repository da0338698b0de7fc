/**
 * Valid and bad requests under load, at the default deadline (`REQUEST_DEADLINE_MS`), through the local
 * Functions host with host.json's HTTP throttles and Redis for the user context, as `npm start` with
 * `REDIS_URL` runs it; every client in its own process:
 * - 200 requests at once, every other one bad (not JSON, mistyped or missing fields, a bad `x-deadline-ms`,
 *   a tensor of the wrong shape or datatype): every good one is answered 200 and every bad one 400, on
 *   `POST /api/score` and on the OIP infer route (the body is validated before admission);
 * - a fixed 400 req/s of valid payments for 10 s, from the benchmark's open-loop client: no refusal, every
 *   request answered 2xx.
 * The assertions are on counts, not timings.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sharedEngine } from '../../lib/app';
import type { LocalHost } from '../../local/host';
import { testRedis } from '../support/redis';
import { resultOfClient } from './support/client-process';
import type { MixedAnswer } from './support/mixed-client';
import type { FixedRateFigures } from './support/open-loop-client';
import { functionsNamed, startLocalHost } from '../support/local-host';

let host: LocalHost;
const redis = testRedis();
const client = (name: string): string => path.join(__dirname, 'support', `${name}.js`);

before(async () => {
  Object.assign(process.env, {
    LOG_LEVEL: 'error',
    REDIS_URL: process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: redis.prefix,
  });
  host = await startLocalHost({
    inProcess: { modules: functionsNamed(['hooks', 'health', 'score', 'oip-models']), hostJson: true },
  });
});
after(async () => {
  await host.dispose();
  await redis.cleanup();
});

async function assertReleased(): Promise<void> {
  assert.equal((await sharedEngine()).admissionStats?.deadline.backlog, 0, 'every admitted request was released');
}

describe('valid and bad requests under load, default deadline, clients in their own processes', () => {
  for (const route of ['score', 'oip'] as const) {
    it(`200 good and bad requests at once on ${route === 'score' ? '/api/score' : 'the OIP infer route'}: every good one 200, every bad one 400`, async () => {
      const answers = await resultOfClient<MixedAnswer[]>(
        client('mixed-client'),
        [host.url, route, '200'],
        `200 mixed requests to ${route} from the client's process`,
        120_000,
      );
      assert.equal(answers.length, 200);
      const wrong = answers.filter((a) => a.status !== (a.good ? 200 : 400));
      assert.deepEqual(wrong, [], `answers that are not 200 for a good request or 400 for a bad one`);
      assert.equal(answers.filter((a) => a.good).length, 100);
      await assertReleased();
    });
  }

  it('a fixed 400 req/s for 10 s (open loop): every request answered 2xx, none refused', async () => {
    const f = await resultOfClient<FixedRateFigures>(
      client('open-loop-client'),
      [host.url, '400', '10'],
      "10 s at 400 req/s from the open-loop client's process",
      120_000,
    );
    process.stdout.write(`# 400 req/s: ${JSON.stringify(f)}\n`);
    assert.equal(f.ok, 4000, 'every request was answered 2xx');
    assert.equal(f.errors, 0, 'no request failed without an answer');
    assert.equal(f.non2xx, 0, 'no request was refused or failed');
    await assertReleased();
  });
});
