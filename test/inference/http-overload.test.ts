/**
 * Overload over real HTTP (own process: one LocalHost per process): far above capacity, the service
 * sheds with 503 + Retry-After + problem+json instead of letting requests time out, and recovers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LocalHost } from '../../local/host';
import { validEvent } from '../support/events';
import { tempModelDir } from './support/model-dir';
import { http, type HttpAnswer } from '../support/http';
import { startServiceHost } from '../support/local-host';

let host: LocalHost;
let models: Awaited<ReturnType<typeof tempModelDir>>;
const CONCURRENT = 400;

before(async () => {
  models = await tempModelDir({ hidden: [1024, 1024, 1024] });
  Object.assign(process.env, {
    MODEL_DIR: models.dir,
    INFERENCE_MODE: 'workers',
    INFERENCE_WORKERS: '1',
    INFERENCE_QUEUE_MAX: '2',
    BATCH_MAX_SIZE: '1',
    REQUEST_DEADLINE_MS: '50',
    LOG_LEVEL: 'error',
  });
  host = await startServiceHost();
});
after(async () => {
  await host.dispose();
  await models.remove();
});

async function burst(): Promise<HttpAnswer[]> {
  const url = `${host.url}/api/score`;
  // A client-side timeout makes a hung request fail the test.
  return Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) =>
      http().post(url, validEvent({ transactionId: `tx-${i}` }), { timeoutMs: 30_000 }),
    ),
  );
}

describe('load shedding over HTTP', () => {
  it('answers every request far above capacity: 200, or 503 with Retry-After and a problem body', async () => {
    const responses = [...(await burst()), ...(await burst())];
    assert.deepEqual(
      [...new Set(responses.map((r) => r.status))].filter((s) => s !== 200 && s !== 503),
      [],
      'only 200 or 503',
    );
    const shed = responses.filter((r) => r.status === 503);
    assert.ok(shed.length > 0, 'some requests were shed');
    assert.ok(
      responses.some((r) => r.status === 200),
      'some requests were served',
    );
    for (const r of shed) {
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.ok(['overloaded', 'deadline_exceeded'].includes(String(r.json['code'])), String(r.json['code']));
      assert.equal(r.json['status'], 503);
    }
  });

  it('recovers: once the burst is over, requests are served again', async () => {
    for (let i = 0; i < 5; i++) {
      // A generous deadline: on a shared, noisy machine this file's 50 ms could lapse for reasons other than load.
      const r = await http().post(`${host.url}/api/score`, validEvent({ transactionId: `after-${i}` }), {
        headers: { 'x-deadline-ms': '5000' },
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
    }
  });
});
