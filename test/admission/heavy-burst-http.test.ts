/**
 * 2 000 concurrent valid requests at once on the heavy bench model (17 → 3×2048 → 1, worker threads),
 * through the local Functions host with its door, as `npm start` runs (own process, default settings).
 * Every request gets an answer: 200 with a score, or 503 + Retry-After + problem+json, `overloaded` (refused at the door) or
 * `deadline_exceeded` (inference could not meet its deadline). None hangs, none is reset, none fails
 * otherwise, and the gate releases every admission. Which answer each request gets depends on the
 * machine's speed, so the counts are printed, not asserted; that admitted requests meet their
 * deadlines is shown with simulated time in `test/inference/batcher-deadline.property.test.ts` and
 * `test/admission/admission-gate.property.test.ts`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sharedEngine } from '../../lib/app';
import type { LocalHost } from '../../local/host';
import { validEvent } from '../support/events';
import { tempModelDir } from '../inference/support/model-dir';
import { startServiceHost } from '../inference/support/service-host';
import { postFresh, type Answer } from './support/post';

let host: LocalHost;
let models: Awaited<ReturnType<typeof tempModelDir>>;
const CONCURRENT = 2000;

before(async () => {
  models = await tempModelDir({ hidden: [2048, 2048, 2048], seed: 7 }); // the bench's heavy model
  Object.assign(process.env, { MODEL_DIR: models.dir, LOG_LEVEL: 'error' });
  host = await startServiceHost();
});
after(async () => {
  await host.dispose();
  await models.remove();
});

describe('2 000 concurrent requests on the heavy model', () => {
  it('answers every one: 200, or a fast 503 with Retry-After (overloaded / deadline_exceeded)', async () => {
    const settled = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, (_, i) =>
        postFresh(
          `${host.url}/api/score`,
          JSON.stringify(validEvent({ transactionId: `heavy-${i}`, userId: `u-${i % 100}` })),
          {},
          120_000,
        ),
      ),
    );
    const failed = settled.filter((s) => s.status === 'rejected');
    assert.equal(
      failed.length,
      0,
      `no answer for ${failed.length}: ${String((failed[0] as PromiseRejectedResult | undefined)?.reason)}`,
    );
    const answers = settled.map((s) => (s as PromiseFulfilledResult<Answer>).value);
    const ok = answers.filter((a) => a.status === 200);
    const shed = answers.filter((a) => a.status === 503);
    assert.equal(
      ok.length + shed.length,
      CONCURRENT,
      `only 200 or 503: ${JSON.stringify(answers.find((a) => a.status !== 200 && a.status !== 503)?.json)}`,
    );
    assert.ok(ok.length > 0, 'some requests were served');
    for (const a of ok) assert.equal(typeof a.json['score'], 'number');
    const codes: Record<string, number> = {};
    for (const a of shed) {
      assert.ok(Number(a.headers['retry-after']) >= 1, 'Retry-After on every 503');
      assert.match(String(a.headers['content-type']), /^application\/problem\+json/);
      const code = String(a.json['code']);
      assert.ok(code === 'overloaded' || code === 'deadline_exceeded', code);
      codes[code] = (codes[code] ?? 0) + 1;
    }
    const stats = (await sharedEngine()).admissionStats;
    assert.equal(stats?.inflight, 0, 'every admission was released');
    assert.equal(host.doorStats?.inflight, 0, "every pass through the host's door was released");
    process.stdout.write(
      `# heavy burst: ${ok.length} × 200, 503s ${JSON.stringify(codes)}, gate ${JSON.stringify(stats)}, door ${JSON.stringify(host.doorStats)}\n`,
    );
  });
});
