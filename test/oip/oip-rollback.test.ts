/**
 * Open Inference Protocol after an upload and a rollback (embedded defaults: the local models folder feeds the blob
 * trigger, in-process pointer): the model metadata lists only the versions this instance serves, and every listed
 * version answers ready, metadata and infer. The rolled-back version is validated but not served here: not listed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FEATURE_COUNT } from '../../lib/features/featurizer';
import { eventually } from '../model-rollout/support/eventually';
import { startEmbeddedRollout, type EmbeddedRollout } from '../model-rollout/support/embedded-rollout';
import { bundledBytes, manifestFor, writeFolderModel } from '../model-rollout/support/models';
import { http } from '../support/http';
import { assertError } from './support';

let rollout: EmbeddedRollout;
const row = Array.from({ length: FEATURE_COUNT }, (_, i) => Math.sin(i) * 2);
const body = { inputs: [{ name: 'features', shape: [1, FEATURE_COUNT], datatype: 'FP32', data: [row] }] };
const v2 = (): string => `${rollout.api}/v2/models/fraud`;

before(async () => {
  rollout = await startEmbeddedRollout();
});
after(() => rollout.dispose());

describe('OIP after an upload and a rollback', () => {
  it('lists only the served version, and every listed version answers ready, metadata and infer', async () => {
    const bytes = await bundledBytes();
    await writeFolderModel(rollout.folder.dir, '1.1.0', bytes, await manifestFor('1.1.0', bytes));
    await eventually(
      async () => (await http().request('GET', v2())).json['versions'],
      (v) => JSON.stringify(v) === '["1.1.0"]',
      'the upload 1.1.0 to serve',
      60_000,
    );
    const back = await http().request('POST', `${rollout.api}/models/fraud/rollback`);
    assert.equal(back.status, 200, JSON.stringify(back.json));

    const listed = (await http().request('GET', v2())).json['versions'] as string[];
    assert.deepEqual(listed, ['1.0.0'], 'the rolled-back-from version is not served here: not listed');
    for (const v of listed) {
      const ready = await http().request('GET', `${v2()}/versions/${v}/ready`);
      assert.deepEqual([ready.status, ready.json], [200, { name: 'fraud', version: v, ready: true }], `ready ${v}`);
      const meta = await http().request('GET', `${v2()}/versions/${v}`);
      assert.equal(meta.status, 200, `metadata ${v}`);
      assert.deepEqual(meta.json['versions'], listed);
      const infer = await http().request('POST', `${v2()}/versions/${v}/infer`, body);
      assert.equal(infer.status, 200, `infer ${v}: ${JSON.stringify(infer.json)}`);
      assert.equal(infer.json['model_version'], v);
    }
    const unversioned = await http().request('POST', `${v2()}/infer`, body);
    assert.deepEqual([unversioned.status, unversioned.json['model_version']], [200, '1.0.0']);
    // named anyway, the version rolled back from is a 409 (validated, not loaded here), as the docs say
    assertError(await http().request('POST', `${v2()}/versions/1.1.0/infer`, body), 409, /not loaded on this instance/);
    const health = await http().request('GET', `${rollout.api}/health/ready`);
    assert.deepEqual([health.status, health.json['status']], [200, 'ready']);
  });
});
