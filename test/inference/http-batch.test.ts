/** POST /api/score/batch and the x-deadline-ms header over real HTTP (own process: one LocalHost per process). */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LocalHost } from '../../local/host';
import { validEvent } from '../support/events';
import { tempModelDir } from './support/model-dir';
import { http } from '../support/http';
import { startServiceHost } from '../support/local-host';

let host: LocalHost;
let models: Awaited<ReturnType<typeof tempModelDir>>;
const api = (p: string) => `${host.url}/api/${p}`;

before(async () => {
  models = await tempModelDir({ hidden: [32] });
  Object.assign(process.env, {
    MODEL_DIR: models.dir,
    INFERENCE_MODE: 'workers',
    INFERENCE_WORKERS: '1',
    LOG_LEVEL: 'warn',
    REQUEST_DEADLINE_MS: '2000',
  });
  host = await startServiceHost();
});
after(async () => {
  await host.dispose();
  await models.remove();
});

describe('POST /api/score/batch over HTTP', () => {
  it('scores the example batch in order, with an error entry for the invalid event', async () => {
    const body = JSON.parse(
      await fs.readFile(path.join(__dirname, '..', '..', '..', 'examples', 'batch.json'), 'utf8'),
    ) as { events: Record<string, unknown>[] };
    body.events.push(validEvent({ transactionId: 'tx-broken', channel: 'fax' }));
    const res = await http().post(api('score/batch'), body);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const results = res.json['results'] as Record<string, unknown>[];
    assert.equal(results.length, body.events.length);
    results.forEach((r, i) => assert.equal(r['transactionId'], body.events[i]?.['transactionId'] || undefined));
    assert.ok('error' in (results[2] as object), "the example's invalid event gets an error entry");
    const broken = results.at(-1) as { error: { status: number; code: string; errors: { path: string }[] } };
    assert.equal(broken.error.code, 'validation_failed');
    assert.deepEqual(
      broken.error.errors.map((e) => e.path),
      [`events.${body.events.length - 1}.channel`],
    );
    const first = results[0] as { timing: Record<string, number> };
    assert.ok(
      first.timing['batchSize'] !== undefined &&
        first.timing['queueMs'] !== undefined &&
        first.timing['inferenceMs'] !== undefined,
    );
  });

  it('accepts a body above the single-event 64 KiB limit (up to 1 MiB)', async () => {
    const note = 'n'.repeat(4000);
    const events = Array.from({ length: 200 }, (_, i) => validEvent({ transactionId: `tx-${i}`, note }));
    const big = JSON.stringify({ events });
    assert.ok(big.length > 64 * 1024 && big.length < 1024 * 1024);
    const res = await http().post(api('score/batch'), big);
    assert.equal(res.status, 200);
    assert.equal((res.json['results'] as unknown[]).length, 200);
    const single = await http().post(api('score'), JSON.stringify({ ...validEvent(), note: 'n'.repeat(70 * 1024) }));
    assert.equal(single.status, 413);
  });

  it('answers 413 problem+json for more than 256 events and for a body over 1 MiB', async () => {
    const many = await http().post(api('score/batch'), { events: Array.from({ length: 257 }, () => validEvent()) });
    assert.equal(many.status, 413);
    assert.match(many.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal(many.json['code'], 'payload_too_large');
    const huge = await http().post(
      api('score/batch'),
      JSON.stringify({ events: [validEvent({ note: 'x'.repeat(1024 * 1024) })] }),
    );
    assert.equal(huge.status, 413);
  });

  it('answers 400 naming the field for a malformed batch body', async () => {
    const res = await http().post(api('score/batch'), { event: [] });
    assert.equal(res.status, 400);
    assert.deepEqual((res.json['errors'] as { path: string }[]).map((e) => e.path).sort(), ['event', 'events']);
  });
});

describe('x-deadline-ms', () => {
  it('accepts a per-request deadline and rejects a malformed one with 400', async () => {
    const ok = await http().post(api('score'), validEvent(), { headers: { 'x-deadline-ms': '500' } });
    assert.equal(ok.status, 200);
    const bad = await http().post(api('score'), validEvent(), { headers: { 'x-deadline-ms': 'soon' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(
      (bad.json['errors'] as { path: string }[]).map((e) => e.path),
      ['headers.x-deadline-ms'],
    );
  });
});
