/**
 * A burst on the heavy bench model (17 → 3×2048 → 1, worker threads), through the local Functions host
 * with host.json's HTTP throttles, as `npm start` runs it (default settings), the client in its own process:
 * 3 rounds × 500 concurrent valid requests on fresh connections. Every request gets an answer: 200 with a
 * score, or 503 + `Retry-After` (`overloaded`: it could not finish within its deadline; `deadline_exceeded`:
 * inference could not meet it). None hangs, none is reset, none fails otherwise, and the admission releases
 * every request. Which answer each request gets depends on the machine's speed: the counts are the
 * benchmark's (`heavy.burst`); the rule itself is property-tested on simulated time in
 * `test/admission/deadline-admission.property.test.ts`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sharedEngine } from '../../lib/app';
import type { LocalHost } from '../../local/host';
import { tempModelDir } from '../inference/support/model-dir';
import { startServiceHost } from '../support/local-host';
import { burstInOwnProcess } from './support/burst-process';

let host: LocalHost;
let models: Awaited<ReturnType<typeof tempModelDir>>;

before(async () => {
  models = await tempModelDir({ hidden: [2048, 2048, 2048], seed: 7 }); // the bench's heavy model
  Object.assign(process.env, { MODEL_DIR: models.dir, LOG_LEVEL: 'error' });
  host = await startServiceHost();
});
after(async () => {
  await host.dispose();
  await models.remove();
});

describe('bursts on the heavy model, client in its own process', () => {
  it('answers every request: 200, or 503 with Retry-After', async () => {
    const f = await burstInOwnProcess(host.url, { n: 500, rounds: 3, requestTimeoutMs: 120_000 }, 600_000);
    assert.equal(f.sent, 1500);
    assert.equal(f.other, 0, `answers other than 200 and 503 + Retry-After: ${JSON.stringify(f.other_by_kind)}`);
    assert.equal(f.ok + f.refused, 1500);
    assert.deepEqual(
      Object.keys(f.refused_by_code).filter((c) => c !== 'overloaded' && c !== 'deadline_exceeded'),
      [],
    );
    assert.ok(f.ok > 0, 'some requests were served');
    process.stdout.write(`# heavy burst: ${JSON.stringify(f)}\n`);
    assert.equal((await sharedEngine()).admissionStats?.deadline.backlog, 0, 'every admitted request was released');
  });
});
