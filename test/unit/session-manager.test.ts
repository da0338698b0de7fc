import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { FEATURE_COUNT, FEATURE_NAMES } from '../../lib/features/featurizer';
import type { BackendFactory, InferenceBackend } from '../../lib/inference/backend';
import { inlineBackendFactory } from '../../lib/inference/ort-session';
import { SessionManager } from '../../lib/inference/session-manager';
import { ModelFolder } from '../../lib/models/model-folder';
import { BUNDLED_MODELS, linearModel, tempModelsDir, writeModel } from '../support/models';

const cpu = { executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' } as const;

/** Wraps the real inline factory to count loads, runs and disposals (observation only). */
function observed(): { factory: BackendFactory; loads: number; runs: number; disposed: number } {
  const real = inlineBackendFactory(cpu);
  const stats = {
    loads: 0,
    runs: 0,
    disposed: 0,
    factory: {
      load: async (model: Parameters<BackendFactory['load']>[0]): Promise<InferenceBackend> => {
        stats.loads++;
        const b = await real.load(model);
        return {
          info: b.info,
          run: (input, rows, o) => {
            stats.runs++;
            return b.run(input, rows, o);
          },
          infer: (r, o) => b.infer(r, o),
          dispose: () => {
            stats.disposed++;
            return b.dispose();
          },
        };
      },
    } as BackendFactory,
  };
  return stats;
}

describe('session manager', () => {
  it('loads once under concurrent first calls, and warms up before serving', async () => {
    const obs = observed();
    let sourceLoads = 0;
    const folder = new ModelFolder(BUNDLED_MODELS, 'fraud', undefined, FEATURE_NAMES);
    const sm = await SessionManager.create({
      source: { load: () => (sourceLoads++, folder.load()) },
      factory: obs.factory,
    });
    assert.equal(sm.isReady, false);
    assert.throws(
      () => sm.acquire(),
      (e: AppError) => e.code === 'model_not_ready' && e.status === 503,
    );
    await Promise.all(Array.from({ length: 25 }, () => sm.ensureReady()));
    assert.equal(sourceLoads, 1);
    assert.equal(obs.loads, 1);
    assert.equal(obs.runs, 1, 'exactly one warm-up inference before any request');
    assert.equal(sm.isReady, true);
    const ready = await sm.probe();
    assert.equal(ready.ready, true);
    if (ready.ready) {
      assert.equal(ready.model.name, 'fraud');
      assert.deepEqual(ready.executionProviders, ['cpu']);
    }
    await sm.dispose();
  });

  it('reports not ready, with the reason, for a broken model file', async () => {
    const dir = await tempModelsDir();
    await writeModel(dir, '1.0.0', new TextEncoder().encode('this is not an onnx model'));
    const sm = await SessionManager.create({
      source: new ModelFolder(dir, 'fraud', undefined, FEATURE_NAMES),
      factory: inlineBackendFactory(cpu),
    });
    await assert.rejects(sm.ensureReady(), (e: AppError) => e.code === 'model_invalid');
    const r = await sm.probe();
    assert.equal(r.ready, false);
    if (!r.ready) assert.match(r.reason, /could not load the model/);
    assert.throws(
      () => sm.acquire(),
      (e: AppError) => e.code === 'model_not_ready' && /not available/.test(e.message),
    );
  });

  it('refuses a model whose warm-up output is out of range', async () => {
    const dir = await tempModelsDir();
    await writeModel(dir, '1.0.0', linearModel({ bias: 7, activation: 'none' }), { explanation: undefined });
    const sm = await SessionManager.create({
      source: new ModelFolder(dir, 'fraud', undefined, FEATURE_NAMES),
      factory: inlineBackendFactory(cpu),
    });
    await assert.rejects(sm.ensureReady(), (e: AppError) => e.code === 'model_invalid' && /Warm-up/.test(e.message));
    assert.equal((await sm.probe()).ready, false);
  });

  it('refuses a file whose sha256 does not match its manifest', async () => {
    const dir = await tempModelsDir();
    await writeModel(dir, '1.0.0', linearModel({ bias: 0 }), { sha256: 'a'.repeat(64) });
    const folder = new ModelFolder(dir, 'fraud', undefined, FEATURE_NAMES);
    await assert.rejects(
      folder.load(),
      (e: AppError) => e.code === 'model_invalid' && e.errors.some((f) => f.path === 'sha256'),
    );
  });

  it('serves the newest version in the folder unless one is pinned', async () => {
    const dir = await tempModelsDir();
    await writeModel(dir, '1.2.0', linearModel({ bias: -1 }));
    await writeModel(dir, '1.10.0', linearModel({ bias: 1 }));
    assert.equal((await new ModelFolder(dir, 'fraud', undefined, FEATURE_NAMES).load()).manifest.version, '1.10.0');
    assert.equal((await new ModelFolder(dir, 'fraud', '1.2.0', FEATURE_NAMES).load()).manifest.version, '1.2.0');
  });

  it('swaps atomically and releases the old version only after its last lease', async () => {
    const dir = await tempModelsDir();
    const obs = observed();
    const folder = new ModelFolder(dir, 'fraud', undefined, FEATURE_NAMES);
    await writeModel(dir, '1.0.0', linearModel({ bias: -2 }));
    const sm = await SessionManager.create({ source: folder, factory: obs.factory });
    await sm.ensureReady();
    const held = sm.acquire();
    await writeModel(dir, '1.1.0', linearModel({ bias: 2 }));
    await sm.install(await folder.loadVersion('1.1.0'));
    assert.equal(sm.manifest?.version, '1.1.0');
    assert.equal(obs.disposed, 0, 'old version still leased');
    const { scores } = await held.backend.run(new Float32Array(FEATURE_COUNT), 1);
    assert.ok(Math.abs((scores[0] ?? 0) - 1 / (1 + Math.exp(2))) < 1e-5, 'the lease still runs the old version');
    held.release();
    held.release(); // idempotent
    await new Promise((r) => setImmediate(r));
    assert.equal(obs.disposed, 1);
    const lease = sm.acquire();
    assert.equal(lease.manifest.version, '1.1.0');
    lease.release();
    await sm.dispose();
    await new Promise((r) => setImmediate(r));
    assert.equal(obs.disposed, 2);
  });
});
