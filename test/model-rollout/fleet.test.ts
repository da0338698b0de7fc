/**
 * Model rollout end to end, with two app instances against one Redis and one Azurite (both started here):
 * instance A is this process's local Functions host, whose blob trigger is fed from Azurite as the runtime
 * would; instance B is another process with no feeder (a blob trigger fires on one instance only).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ContainerClient } from '@azure/storage-blob';
import { sharedEngine } from '../../lib/app';
import type { Engine } from '../../lib/engine';
import { compareVersions } from '../../lib/models/model-folder';
import type { ModelStatus } from '../../lib/model-rollout/model-admin';
import { inShare } from '../../lib/model-rollout/traffic-router';
import type { LocalHost } from '../../local/host';
import { BlobFeeder } from '../../local/blob-feeder';
import { validEvent } from '../support/events';
import { startHost } from '../support/local-host';
import { BUNDLED_MODELS } from '../support/models';
import { testRedis } from '../support/redis';
import { startAzurite, type Azurite } from './support/azurite';
import { manifestFor, models, uploadBlob } from './support/models';
import { eventually } from './support/eventually';
import { startInstance, type ChildInstance } from './support/process';

const { prefix, cleanup } = testRedis();
let azurite: Azurite;
let container: ContainerClient;
let hostA: LocalHost;
let engineA: Engine;
let feeder: BlobFeeder | undefined;
let B: ChildInstance;
let A: string;

async function score(
  base: string,
  userId = 'user-42',
  transactionId = 'tx-1',
): Promise<{ status: number; version: string | null; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/api/score`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' },
    body: JSON.stringify(validEvent({ userId, transactionId })),
    signal: AbortSignal.timeout(30_000),
  });
  return {
    status: res.status,
    version: res.headers.get('x-model-version'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

async function status(base: string): Promise<ModelStatus> {
  const res = await fetch(`${base}/api/models/fraud`);
  assert.equal(res.status, 200);
  return (await res.json()) as ModelStatus;
}

const bothServe = async (v: string): Promise<void> => {
  await eventually(
    async () => [(await score(A)).version, (await score(B.url)).version],
    (vs) => vs.every((x) => x === v),
    `both instances on ${v}`,
  );
};

before(async () => {
  azurite = await startAzurite();
  container = await azurite.container('models');
  const env = {
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: prefix,
    ModelStorage: azurite.connectionString,
    MODELS_CONTAINER: 'models',
    MODEL_DIR: BUNDLED_MODELS,
    INFERENCE_WORKERS: '1',
    BATCH_MAX_SIZE: '8',
    LOG_LEVEL: 'error',
  };
  B = await startInstance({ ...env, INSTANCE_ID: 'B' });
  Object.assign(process.env, env, { INSTANCE_ID: 'A' });
  hostA = await startHost();
  A = hostA.url;
  engineA = await sharedEngine();
  feeder = await BlobFeeder.start({ host: hostA, repository: engineA.models.repository, intervalMs: 100 });
  await bothServe('1.0.0');
});
after(async () => {
  await feeder?.stop();
  await hostA?.dispose();
  await B?.stop();
  await azurite?.stop();
  await cleanup();
});

describe('model rollout across instances', () => {
  it("an upload to the container fires A's blob trigger and reaches both instances", async () => {
    const bytes = await models.same();
    await uploadBlob(container, '1.1.0', bytes, await manifestFor('1.1.0', bytes));
    await bothServe('1.1.0');
    const s = await eventually(
      () => status(B.url),
      (x) => x.fleet.instances.filter((i) => i.activeVersion === '1.1.0').length === 2,
      'both instances reported',
    );
    const active = s.fleet.versions.find((v) => v.version === s.active?.version);
    assert.deepEqual(
      [s.active?.version, s.active?.by, active?.publishedBy, active?.blobPath, s.previous?.version],
      ['1.1.0', 'A', 'A', 'models/fraud/1.1.0.onnx', '1.0.0'],
    );
    assert.equal(active?.validation?.goldenRows, 32);
    const body = (await score(B.url)).body;
    assert.deepEqual(body['model'], { name: 'fraud', version: '1.1.0' });
  });

  it('rejects a corrupt file, a wrong signature, a sha256 mismatch and a golden-set failure; the active version stays', async () => {
    const cases: { version: string; bytes: Uint8Array; manifest: 'own' | 'wrongSha'; check: string }[] = [
      {
        version: '1.2.0',
        bytes: new TextEncoder().encode('definitely not an onnx file'),
        manifest: 'own',
        check: 'signature',
      },
      { version: '1.2.1', bytes: models.wrongSignature(), manifest: 'own', check: 'signature' },
      { version: '1.2.2', bytes: await models.same(), manifest: 'wrongSha', check: 'sha256' },
      { version: '1.2.3', bytes: models.goldenFails(), manifest: 'own', check: 'golden' },
    ];
    for (const c of cases) {
      const manifest = await manifestFor(c.version, c.bytes, {
        golden: undefined,
        explanation: undefined,
        ...(c.manifest === 'wrongSha' ? { sha256: 'b'.repeat(64) } : {}),
      });
      await uploadBlob(container, c.version, c.bytes, manifest);
      const s = await eventually(
        () => status(B.url),
        (x) => x.rejections[0]?.version === c.version,
        `rejection of ${c.version} visible on B`,
      );
      assert.deepEqual(
        [s.rejections[0]?.check, s.rejections[0]?.code, s.rejections[0]?.by],
        [c.check, 'model_invalid', 'A'],
        JSON.stringify(s.rejections[0]),
      );
      assert.ok((s.rejections[0]?.reason.length ?? 0) > 0);
      assert.equal(s.active?.version, '1.1.0');
    }
    assert.deepEqual([(await score(A)).version, (await score(B.url)).version], ['1.1.0', '1.1.0']);
  });

  it('swaps under concurrent load: no failed request, and each version was active when its request was admitted', async () => {
    const failures: string[] = [];
    const seenA: { v: string; from: string; to: string }[] = [];
    const seenB: string[][] = [];
    let stop = false;
    const current = (): string => engineA.sessions.manifest?.version ?? '?';
    const loopA = async (k: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const from = current();
        const r = await score(A, `u-${k}`, `a-${k}-${i}`);
        const to = current();
        if (r.status !== 200) failures.push(`A ${r.status} ${JSON.stringify(r.body)}`);
        else seenA.push({ v: String(r.version), from, to });
      }
    };
    const loopB = async (k: number): Promise<void> => {
      const seq: string[] = [];
      seenB.push(seq);
      for (let i = 0; !stop; i++) {
        const r = await score(B.url, `u-${k}`, `b-${k}-${i}`);
        if (r.status !== 200) failures.push(`B ${r.status} ${JSON.stringify(r.body)}`);
        else seq.push(String(r.version));
      }
    };
    const loops = [...[0, 1, 2, 3, 4, 5].map(loopA), ...[0, 1, 2, 3].map(loopB)];
    // the load is flowing on both instances before the upload (counted answers, not a sleep)
    await eventually(
      () => Promise.resolve(seenA.length > 10 && seenB.every((q) => q.length > 2)),
      (x) => x,
      'load on both instances before the swap',
    );
    const bytes = await models.same();
    await uploadBlob(container, '1.3.0', bytes, await manifestFor('1.3.0', bytes));
    await eventually(
      async () => seenA.some((s) => s.v === '1.3.0') && seenB.every((q) => q.at(-1) === '1.3.0'),
      (x) => x,
      'the swap seen under load',
    );
    // keep the load going past the swap: a few more answers from every B loop after it saw 1.3.0
    const marks = seenB.map((q) => q.length);
    await eventually(
      () => Promise.resolve(seenB.every((q, i) => q.length >= (marks[i] ?? 0) + 3)),
      (x) => x,
      'load after the swap',
    );
    stop = true;
    await Promise.all(loops);
    assert.deepEqual(failures, []);
    assert.ok(seenA.length > 20 && seenB.flat().length > 10, `${seenA.length} / ${seenB.flat().length} requests`);
    for (const s of seenA)
      assert.ok(
        compareVersions(s.from, s.v) <= 0 && compareVersions(s.v, s.to) <= 0,
        `${s.v} outside [${s.from}, ${s.to}]`,
      );
    for (const seq of seenB)
      for (let i = 1; i < seq.length; i++)
        assert.ok(compareVersions(seq[i - 1] as string, seq[i] as string) <= 0, `B went back: ${seq.join(',')}`);
    assert.ok(seenA.some((s) => s.v === '1.1.0') && seenA.some((s) => s.v === '1.3.0'));
  });

  it('rolls back to the previous pointer on every instance (admin call served by B)', async () => {
    const res = await fetch(`${B.url}/api/models/fraud/rollback`, { method: 'POST' });
    assert.equal(res.status, 200, await res.clone().text());
    const s = (await res.json()) as ModelStatus;
    assert.deepEqual([s.active?.version, s.lastChange?.kind], ['1.1.0', 'rollback']);
    await bothServe('1.1.0');
  });

  it('routes a canary share of users to the candidate, stably per user and the same on every instance', async () => {
    const bytes = await models.same();
    await uploadBlob(container, '1.4.0', bytes, await manifestFor('1.4.0', bytes), { rollout: 'candidate' });
    await eventually(
      () => status(A),
      (x) => x.fleet.versions.some((v) => v.version === '1.4.0'),
      'candidate published',
    );
    assert.equal((await score(A)).version, '1.1.0', 'a candidate upload does not promote');
    const put = await fetch(`${A}/api/models/fraud/traffic`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ candidate: '1.4.0', canaryPercent: 30 }),
    });
    assert.equal(put.status, 200, await put.clone().text());
    await eventually(
      () => status(A),
      (x) => x.fleet.instances.filter((i) => i.candidateVersion === '1.4.0').length === 2,
      'candidate loaded on both',
    );
    let canary = 0;
    for (let u = 0; u < 30; u++) {
      const user = `user-${u}`;
      const expected = inShare(user, 'canary', 30) ? '1.4.0' : '1.1.0';
      if (expected === '1.4.0') canary++;
      const got = [
        (await score(A, user)).version,
        (await score(B.url, user)).version,
        (await score(A, user)).version,
        (await score(B.url, user)).version,
      ];
      assert.deepEqual(got, [expected, expected, expected, expected], user);
    }
    assert.ok(canary > 0 && canary < 30, `${canary} of 30 users on the canary`);
  });
});
