/**
 * Open Inference Protocol versions while a canary is active (the embedded default: the local models folder
 * feeds the blob trigger, in-process fleet store): without a version the active one serves; with a version,
 * exactly that one (the canary candidate too); the metadata lists only the versions served here; a validated version
 * not loaded here is not listed, and is a 409.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FEATURE_COUNT } from '../../lib/features/featurizer';
import { eventually } from '../model-rollout/support/eventually';
import { startEmbeddedRollout, type EmbeddedRollout } from '../model-rollout/support/embedded-rollout';
import { type copyBundled, manifestFor, models, writeFolderModel } from '../model-rollout/support/models';
import { http } from '../support/http';
import { assertError } from './support';

let api: string;
let rollout: EmbeddedRollout;
let folder: Awaited<ReturnType<typeof copyBundled>>;

/** sigmoid(-1.5): every score of the `shifted` candidate. */
const SHIFTED = 1 / (1 + Math.exp(1.5));
const rows = [0, 1, 2].map((k) => Array.from({ length: FEATURE_COUNT }, (_, i) => Math.cos(k * 3 + i) * 2));
const body = { inputs: [{ name: 'features', shape: [3, FEATURE_COUNT], datatype: 'FP32', data: rows }] };

async function infer(path: string): Promise<{ status: number; version: unknown; scores: number[] }> {
  const r = await http().request('POST', `${api}/v2/models/fraud${path}/infer`, body, {
    headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' },
  });
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.json)}`);
  const [out] = r.json['outputs'] as { data: number[] }[];
  return { status: r.status, version: r.json['model_version'], scores: out?.data ?? [] };
}

before(async () => {
  rollout = await startEmbeddedRollout();
  ({ api, folder } = rollout);
  const shifted = models.shifted();
  const manifest = await manifestFor('1.1.0', shifted, { golden: undefined, explanation: undefined });
  await writeFolderModel(folder.dir, '1.1.0', shifted, manifest, { rollout: 'candidate', force: 'true' });
  await eventually(
    async () => (await http().request('GET', `${api}/v2/models/fraud/versions/1.1.0`)).status,
    (s) => s === 200,
    'the candidate upload validated (described from its manifest)',
  );
  const listed = await http().request('GET', `${api}/v2/models/fraud`);
  assert.deepEqual(listed.json['versions'], ['1.0.0'], 'validated, not loaded: not listed');
  const put = await http().request('PUT', `${api}/models/fraud/traffic`, { candidate: '1.1.0', canaryPercent: 50 });
  assert.equal(put.status, 200, JSON.stringify(put.json));
  await eventually(
    async () => (await http().request('GET', `${api}/v2/models/fraud/versions/1.1.0/ready`)).status,
    (s) => s === 200,
    'the canary candidate loaded',
  );
});
after(() => rollout.dispose());

describe('OIP versions with a canary', () => {
  it('serves the active version without a version, and exactly the version named with one', async () => {
    const active = await infer('');
    assert.equal(active.version, '1.0.0');
    assert.ok(
      active.scores.some((s) => Math.abs(s - SHIFTED) > 1e-3),
      'the active model is not the shifted one',
    );
    for (let i = 0; i < 5; i++) {
      const canary = await infer('/versions/1.1.0');
      assert.equal(canary.version, '1.1.0');
      canary.scores.forEach((s) => assert.ok(Math.abs(s - SHIFTED) < 1e-5, `canary score ${s}`));
      const pinned = await infer('/versions/1.0.0');
      assert.deepEqual([pinned.version, pinned.scores], ['1.0.0', active.scores]);
    }
  });

  it('lists the versions served here (active and canary candidate) and describes the candidate from its graph', async () => {
    const r = await http().request('GET', `${api}/v2/models/fraud/versions/1.1.0`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json['versions'], ['1.0.0', '1.1.0']);
    assert.deepEqual(r.json['inputs'], [{ name: 'features', datatype: 'FP32', shape: [-1, FEATURE_COUNT] }]);
  });

  it('answers 409 for a validated version not loaded on this instance (after promoting the candidate)', async () => {
    const p = await http().request('POST', `${api}/models/fraud/promote`, { version: '1.1.0' });
    assert.equal(p.status, 200, JSON.stringify(p.json));
    assert.equal((await infer('')).version, '1.1.0');
    assert.deepEqual((await http().request('GET', `${api}/v2/models/fraud`)).json['versions'], ['1.1.0']);
    const old = await http().request('POST', `${api}/v2/models/fraud/versions/1.0.0/infer`, body);
    assertError(old, 409, /validated but not loaded on this instance/);
    assertError(
      await http().request('GET', `${api}/v2/models/fraud/versions/1.0.0/ready`),
      400,
      /not loaded on this instance/,
    );
    const meta = await http().request('GET', `${api}/v2/models/fraud/versions/1.0.0`);
    assert.equal(meta.status, 200, 'metadata of a validated version comes from its manifest');
    assert.deepEqual(meta.json['outputs'], [{ name: 'score', datatype: 'FP32', shape: [-1, 1] }]);
  });
});
