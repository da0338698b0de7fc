/**
 * The embedded default (no Redis, no storage account): the local models folder plays the container and
 * feeds the blob trigger; the admin API over HTTP rejects bad input with problem+json, runs a shadow
 * candidate with side-by-side distributions, promotes and rolls back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ModelStatus } from '../../lib/model-rollout/model-admin';
import type { LocalHost } from '../../local/host';
import { validEvent } from '../support/events';
import { startEmbeddedRollout, type EmbeddedRollout } from './support/embedded-rollout';
import { type copyBundled, manifestFor, models, writeFolderModel } from './support/models';
import { eventually } from './support/eventually';

let host: LocalHost;
let api: string;
let rollout: EmbeddedRollout;
let folder: Awaited<ReturnType<typeof copyBundled>>;

async function call(
  method: string,
  path: string,
  body?: string,
  contentType = 'application/json',
): Promise<{ status: number; type: string; json: Record<string, unknown> }> {
  const res = await fetch(`${api}${path}`, {
    method,
    ...(body === undefined ? {} : { body, headers: { 'content-type': contentType } }),
  });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

async function status(): Promise<ModelStatus> {
  return (await call('GET', '/models/fraud')).json as unknown as ModelStatus;
}

async function scoreVersion(userId = 'user-1', transactionId = 'tx-1'): Promise<string | null> {
  const res = await fetch(`${api}/score`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' },
    body: JSON.stringify(validEvent({ userId, transactionId })),
  });
  assert.equal(res.status, 200);
  return res.headers.get('x-model-version');
}

before(async () => {
  rollout = await startEmbeddedRollout();
  ({ host, api, folder } = rollout);
  const bytes = await models.same();
  await writeFolderModel(folder.dir, '1.1.0', bytes, await manifestFor('1.1.0', bytes));
  await eventually(
    () => scoreVersion(),
    (v) => v === '1.1.0',
    'the folder upload served',
  );
});
after(() => rollout.dispose());

describe('admin API', () => {
  it('shows the active and previous versions, this instance and the in-process store', async () => {
    const s = await status();
    const bundled = s.fleet.versions.find((v) => v.version === s.previous?.version);
    assert.deepEqual(
      [s.active?.version, s.previous?.version, bundled?.source, s.fleet.thisInstance.store, s.serving],
      ['1.1.0', '1.0.0', 'bundled', 'in-process', '1.1.0'],
    );
    const listed = (await call('GET', '/models')).json['models'] as ModelStatus[];
    assert.deepEqual(
      listed.map((m) => [m.name, m.active?.version, m.generation]),
      [[s.name, s.active?.version, s.generation]],
      'GET /api/models lists the same view',
    );
    assert.equal((await call('GET', '/models/other')).status, 404);
    const fns = new Map(host.functions.map((f) => [f.name, f]));
    for (const n of ['modelsList', 'modelsStatus', 'modelsPromote', 'modelsRollback', 'modelsTraffic'])
      assert.equal((fns.get(n)?.trigger as { authLevel?: string }).authLevel, 'admin', n);
    const blob = fns.get('modelBlob')?.trigger as Record<string, unknown>;
    assert.deepEqual(
      [blob['type'], blob['path'], blob['connection'], blob['source']],
      ['blobTrigger', '%MODELS_CONTAINER%/{name}/{version}.onnx', 'ModelStorage', 'EventGrid'],
    );
  });

  it('rejects bad input with problem+json naming every invalid field', async () => {
    const cases: [string, string, string | undefined, number, string, string[]?, string?][] = [
      ['POST', '/models/fraud/promote', '{"version": ', 400, 'invalid_json'],
      ['POST', '/models/fraud/promote', 'version=1.2.0', 415, 'unsupported_media_type', undefined, 'text/plain'],
      ['POST', '/models/fraud/promote', '{}', 400, 'validation_failed', ['version']],
      ['POST', '/models/fraud/promote', '[1]', 400, 'validation_failed', ['']],
      ['POST', '/models/fraud/promote', '{"version":"1.x","extra":1}', 400, 'validation_failed', ['extra', 'version']],
      ['POST', '/models/fraud/promote', '{"version":"9.9.9"}', 404, 'not_found'],
      ['POST', '/models/fraud/promote', '{"version":"1.0.0"}', 409, 'conflict'],
      ['POST', '/models/Fraud/promote', '{"version":"1.1.0"}', 404, 'not_found'],
      ['POST', '/models/other/rollback', undefined, 404, 'not_found'],
      [
        'PUT',
        '/models/fraud/traffic',
        '{"candidate":"1.1.0","canaryPercent":150,"shadowPercent":-1}',
        400,
        'validation_failed',
        ['canaryPercent', 'shadowPercent'],
      ],
      [
        'PUT',
        '/models/fraud/traffic',
        '{"candidate":"1.1.0","canaryPercent":"10"}',
        400,
        'validation_failed',
        ['canaryPercent'],
      ],
      ['PUT', '/models/fraud/traffic', '{"canaryPercent":10}', 400, 'validation_failed', ['candidate']],
      ['PUT', '/models/fraud/traffic', '{"candidate":"1.1.0","canaryPercent":10}', 409, 'conflict'],
      ['PUT', '/models/fraud/traffic', '{"candidate":"2.0.0","canaryPercent":10}', 404, 'not_found'],
    ];
    for (const [method, path, body, code, errCode, fields, type] of cases) {
      const r = await call(method, path, body, type);
      const label = `${method} ${path} ${body ?? ''}`;
      assert.equal(r.status, code, `${label}: ${JSON.stringify(r.json)}`);
      assert.equal(r.type, 'application/problem+json', label);
      assert.equal(r.json['code'], errCode, label);
      if (fields !== undefined)
        assert.deepEqual((r.json['errors'] as { path: string }[]).map((e) => e.path).sort(), fields, label);
    }
    assert.equal((await status()).active?.version, '1.1.0', 'nothing changed');
  });

  it('refuses a large score shift, and accepts it when forced; runs it in shadow with side-by-side distributions', async () => {
    const shifted = models.shifted();
    const manifest = await manifestFor('1.2.0', shifted, { golden: undefined, explanation: undefined });
    await writeFolderModel(folder.dir, '1.2.0', shifted, manifest, { rollout: 'candidate' });
    const refused = await eventually(status, (s) => s.rejections[0]?.version === '1.2.0', 'shift rejection');
    assert.deepEqual([refused.rejections[0]?.check, refused.rejections[0]?.code], ['shift', 'model_shift_exceeded']);
    await writeFolderModel(
      folder.dir,
      '1.2.1',
      shifted,
      { ...manifest, version: '1.2.1', file: '1.2.1.onnx' },
      { rollout: 'candidate', force: 'true' },
    );
    const s = await eventually(
      status,
      (x) => x.fleet.versions.some((v) => v.version === '1.2.1'),
      'forced upload published',
    );
    assert.equal(s.active?.version, '1.1.0');

    const put = await call('PUT', '/models/fraud/traffic', JSON.stringify({ candidate: '1.2.1', shadowPercent: 100 }));
    assert.equal(put.status, 200, JSON.stringify(put.json));
    for (let i = 0; i < 20; i++)
      assert.equal(await scoreVersion(`u-${i}`, `tx-shadow-${i}`), '1.1.0', 'shadow never serves');
    const shadow = (await eventually(status, (x) => (x.shadow?.active.n ?? 0) >= 20, 'shadow results')).shadow;
    assert.ok(shadow !== undefined);
    assert.deepEqual([shadow.active.version, shadow.candidate.version], ['1.1.0', '1.2.1']);
    assert.ok((shadow.candidate.mean ?? 0) > 0.15 && (shadow.active.mean ?? 1) < 0.15, JSON.stringify(shadow));
    assert.ok((shadow.meanAbsDiff ?? 0) > 0.1);
    assert.equal(
      shadow.candidate.histogram.reduce((n, b) => n + b.count, 0),
      shadow.candidate.n,
    );
  });

  it('promotes the candidate, then rolls back step by step to the bundled baseline', async () => {
    const p = await call('POST', '/models/fraud/promote', JSON.stringify({ version: '1.2.1' }));
    assert.equal(p.status, 200, JSON.stringify(p.json));
    assert.equal(await scoreVersion(), '1.2.1');
    assert.equal((await status()).candidate, undefined, 'promoting the candidate ends its shadow');
    assert.equal((await call('POST', '/models/fraud/rollback')).status, 200);
    assert.equal(await scoreVersion(), '1.1.0');
    assert.equal((await call('POST', '/models/fraud/rollback')).status, 200);
    assert.equal(await scoreVersion(), '1.0.0');
    const none = await call('POST', '/models/fraud/rollback');
    assert.deepEqual([none.status, none.json['code']], [409, 'conflict']);
    const ready = (await (await fetch(`${api}/health/ready`)).json()) as { model: { version: string } };
    const health = (await call('GET', '/models/health')).json as {
      model: { version: string };
      fleet: { stale: boolean };
    };
    assert.deepEqual([ready.model.version, health.model.version, health.fleet.stale], ['1.0.0', '1.0.0', false]);
  });
});
