import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LocalHost } from '../../local/host';
import { startHost } from '../support/local-host';
import { http } from '../support/http';
import { validEvent } from '../support/events';

describe('HTTP contract when the model is not available', () => {
  let host: LocalHost;
  before(async () => {
    process.env['MODEL_DIR'] = await fs.mkdtemp(path.join(os.tmpdir(), 'no-models-'));
    host = await startHost();
  });
  after(() => host.dispose());

  it('readiness answers 503 with Retry-After, status and model only; the reason is in the admin view', async () => {
    const r = await fetch(`${host.url}/api/health/ready`);
    assert.equal(r.status, 503);
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    assert.deepEqual(await r.json(), { status: 'not_ready', model: null });
    const admin = await fetch(`${host.url}/api/models/health`);
    assert.equal(admin.status, 200);
    const detail = (await admin.json()) as { status: string; reason: string };
    assert.equal(detail.status, 'not_ready');
    assert.match(detail.reason, /No model "fraud"/);
  });

  it('scoring answers 503 model_not_ready with Retry-After, not 500', async () => {
    const r = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent()));
    assert.equal(r.status, 503);
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    assert.equal(r.json['code'], 'model_not_ready');
  });

  it('still validates input first: bad input is a 400 even without a model', async () => {
    const r = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ amount: -1 })));
    assert.equal(r.status, 400);
  });
});
