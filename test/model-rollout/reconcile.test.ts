/**
 * Fleet convergence with real Redis and two (then three) engines in one process, the local folder as the
 * models container, and hand-driven reconcile timers: a change reaches the other instance by pub/sub;
 * concurrent notifications load a version once; a missed message is repaired by the reconcile loop; an
 * instance started later comes up on the pointer; one that cannot load the pointer keeps serving and
 * reports itself stale (readiness 503 naming the version it waits for) until it can.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../../lib/app';
import type { Config } from '../../lib/config/config';
import { testConfig } from '../support/config';
import type { Engine } from '../../lib/engine';
import type { BackendFactory } from '../../lib/inference/backend';
import { batchedBackendFactory } from '../../lib/inference/backend-factory';
import { publishVersion, type FleetState } from '../../lib/model-rollout/fleet-state';
import { fleetKeys, redisFleetStore } from '../../lib/model-rollout/redis-fleet-reports';
import { silentLogger } from '../../lib/platform/logger';
import { FakeTimers } from '../support/clock';
import { validEvent } from '../support/events';
import { testRedis } from '../support/redis';
import { copyBundled, manifestFor, models, writeFolderModel } from './support/models';

const { redis, prefix, cleanup } = testRedis();
let folder: Awaited<ReturnType<typeof copyBundled>>;
let config: Config;
const engines: Engine[] = [];
const loads = new Map<string, number>();

/** The production factory, counting loads per instance. */
function countingFactory(id: string): BackendFactory {
  const real = batchedBackendFactory({
    ...config.inference,
    session: { executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' },
  });
  return { load: (m) => (loads.set(id, (loads.get(id) ?? 0) + 1), real.load(m)) };
}

async function instance(id: string, time: FakeTimers): Promise<Engine> {
  const e = await createEngine(config, {
    logger: silentLogger,
    backendFactory: countingFactory(id),
    rollout: { timers: time, instanceId: id },
  });
  engines.push(e);
  await e.start();
  return e;
}

/** Waits (bounded) for real I/O (pub/sub delivery, a worker loading a model) to bring `check` true. */
async function eventually(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Writes a pointer change straight into Redis without announcing it: a missed pub/sub message. */
async function writeSilently(change: (s: FleetState) => FleetState): Promise<void> {
  const store = redisFleetStore(redis, prefix);
  const s = change((await store.read('fraud')) as FleetState);
  await redis.hset(fleetKeys(prefix, 'fraud').state, 'generation', String(s.generation), 'state', JSON.stringify(s));
}

const version = (e: Engine): string | undefined => e.sessions.manifest?.version;
const timeA = new FakeTimers();
const timeB = new FakeTimers();
let A: Engine;
let B: Engine;

before(async () => {
  folder = await copyBundled();
  config = testConfig({
    MODEL_DIR: folder.dir,
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: prefix,
    INFERENCE_WORKERS: '1',
    BATCH_MAX_SIZE: '8',
    REQUEST_DEADLINE_MS: '5000',
    LOG_LEVEL: 'error',
  });
  A = await instance('A', timeA);
  B = await instance('B', timeB);
  await eventually(() => B.models.readiness().generation === 0, 'B on generation 0');
  for (const e of [A, B])
    assert.equal(e.models.store.description, 'redis', 'both instances share the Redis fleet store');
});
after(async () => {
  for (const e of engines) await e.dispose();
  await cleanup();
  await folder.remove();
});

describe('fleet convergence', () => {
  it('an upload validated on A reaches B by pub/sub; concurrent notifications load it once', async () => {
    assert.deepEqual([version(A), version(B)], ['1.0.0', '1.0.0']);
    const bytes = await models.same();
    await writeFolderModel(folder.dir, '1.1.0', bytes, await manifestFor('1.1.0', bytes));
    const loadsA = loads.get('A') ?? 0;
    const loadsB = loads.get('B') ?? 0;
    const outcome = await A.models.handleUpload({ blobPath: 'models/fraud/1.1.0.onnx', bytes, metadata: {} });
    assert.equal(outcome.kind, 'published');
    // more notifications of the same change while B is loading it
    await Promise.all([B.models.converge(), B.models.converge(), B.models.converge()]);
    await eventually(() => version(A) === '1.1.0' && version(B) === '1.1.0', 'both on 1.1.0');
    assert.equal((loads.get('A') ?? 0) - loadsA, 1, 'A loaded 1.1.0 once (validation), and swapped that backend in');
    assert.equal((loads.get('B') ?? 0) - loadsB, 1, 'B loaded 1.1.0 once');
    const r = await B.score(validEvent());
    assert.equal(r.model.version, '1.1.0');
  });

  it('a missed pub/sub message is repaired by the reconcile loop', async () => {
    const bytes = await models.same();
    await writeFolderModel(folder.dir, '1.2.0', bytes, await manifestFor('1.2.0', bytes));
    const manifest = await manifestFor('1.2.0', bytes);
    await writeSilently(
      (s) =>
        publishVersion(
          s,
          {
            pointer: {
              ...s.active,
              version: '1.2.0',
              blobPath: 'models/fraud/1.2.0.onnx',
              sha256: manifest.sha256,
              source: 'repository',
            },
            manifest,
          },
          { mode: 'active', by: 'test', at: new Date().toISOString() },
        ).state,
    );
    await B.models.readiness(); // nothing announced: B has no reason to look
    assert.equal(version(B), '1.1.0');
    timeB.advance(30_000); // the reconcile period (MODEL_RECONCILE_INTERVAL_SEC default 30)
    await eventually(() => version(B) === '1.2.0', 'B converged by reconcile');
    assert.equal(B.models.readiness().stale, false);
    timeA.advance(30_000);
    await eventually(() => version(A) === '1.2.0', 'A converged by reconcile');
  });

  it("an instance started later comes up on the pointer's version directly", async () => {
    const before = loads.get('C') ?? 0;
    const C = await instance('C', new FakeTimers());
    assert.equal(version(C), '1.2.0');
    assert.equal((loads.get('C') ?? 0) - before, 1, 'no bundled model loaded first');
  });

  it('an instance that cannot load the pointer keeps serving its version and reports itself stale, until it can', async () => {
    const good = await models.same();
    const manifest = await manifestFor('1.3.0', good);
    // the container holds other bytes than the ones validated: every instance must refuse them
    await writeFolderModel(folder.dir, '1.3.0', models.shifted(), manifest);
    await writeSilently(
      (s) =>
        publishVersion(
          s,
          {
            pointer: {
              ...s.active,
              version: '1.3.0',
              blobPath: 'models/fraud/1.3.0.onnx',
              sha256: manifest.sha256,
              source: 'repository',
            },
            manifest,
          },
          { mode: 'active', by: 'test', at: new Date().toISOString() },
        ).state,
    );
    timeB.advance(30_000);
    await eventually(() => B.models.readiness().stale, 'B stale');
    const ready = await B.readiness();
    assert.equal(ready.ready, true, 'still serving (the model answers its sample inference)');
    assert.ok(ready.ready && ready.model.version === '1.2.0');
    assert.equal(ready.fleet?.desiredVersion, '1.3.0');
    assert.match(ready.fleet?.reason ?? '', /sha256/);
    const pub = B.ready();
    assert.equal(pub.status, 'not_ready', "not on the pointer's version: out of rotation");
    assert.deepEqual(
      pub.waitingFor?.map((w) => [w.kind, w.name, w.serving, w.active]),
      [['model', 'fraud', '1.2.0', '1.3.0']],
    );
    assert.match(B.healthDetail().reason ?? '', /model fraud: serving 1\.2\.0, active 1\.3\.0 \(.*sha256/);
    assert.equal((await B.score(validEvent())).model.version, '1.2.0');
    const status = await A.models.status('fraud');
    assert.ok(
      status.fleet.instances.some((i) => i.instanceId === 'B' && i.stale && i.desiredVersion === '1.3.0'),
      JSON.stringify(status.fleet.instances),
    );

    await fs.writeFile(path.join(folder.dir, 'fraud', '1.3.0.onnx'), good); // fixed
    timeB.advance(30_000);
    await eventually(() => version(B) === '1.3.0', 'B converged once the file was right');
    assert.equal(B.models.readiness().stale, false);
    assert.deepEqual(B.ready(), { status: 'ready', model: { name: 'fraud', version: '1.3.0' } });
  });
});
