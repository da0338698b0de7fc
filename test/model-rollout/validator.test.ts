/**
 * Validation of uploaded models through the production backend factory (worker threads): every check
 * refuses its kind of bad model with a stable code and names the failed check; a good model comes back
 * loaded and warm at every batch size.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FEATURE_NAMES } from '../../lib/features/featurizer';
import { batchedBackendFactory } from '../../lib/inference/backend-factory';
import { SessionManager } from '../../lib/inference/session-manager';
import type { ModelManifest } from '../../lib/models/manifest';
import { ModelFolder } from '../../lib/models/model-folder';
import {
  ModelRejectedError,
  ModelValidator,
  sha256Async,
  type ValidationRequest,
} from '../../lib/model-rollout/model-validator';
import { BUNDLED_MODELS, bundledManifest } from '../support/models';
import { manifestFor, models } from './support/models';

let sessions: SessionManager;
let validator: ModelValidator;
let base: ModelManifest;
let loads = 0;

before(async () => {
  const real = batchedBackendFactory({
    mode: 'workers',
    workers: 1,
    batchMaxSize: 16,
    batchMaxSizeGpu: 16,
    batchWindowMs: 1,
    queueMax: 2048,
    session: { executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' },
  });
  const factory = { load: (m: Parameters<typeof real.load>[0]) => (loads++, real.load(m)) };
  sessions = await SessionManager.create({
    source: new ModelFolder(BUNDLED_MODELS, 'fraud', '1.0.0', FEATURE_NAMES),
    factory,
  });
  await sessions.ensureReady();
  validator = new ModelValidator({ sessions, features: FEATURE_NAMES, batchMaxSize: 16, batchMaxSizeGpu: 16 });
  base = await bundledManifest();
});
after(() => sessions.dispose());

async function request(
  bytes: Uint8Array,
  manifest: ModelManifest,
  extra: Partial<ValidationRequest> = {},
): Promise<ValidationRequest> {
  const golden = manifest.golden ?? base.golden;
  return {
    manifest,
    bytes,
    sha256: await sha256Async(bytes),
    golden:
      golden === undefined
        ? undefined
        : { inputs: golden.inputs, source: manifest.golden === undefined ? 'kept' : 'manifest' },
    compareWith: sessions.acquire(),
    shiftMax: 0.1,
    forced: false,
    ...extra,
  };
}

async function rejected(req: ValidationRequest): Promise<ModelRejectedError> {
  const before = loads;
  try {
    const { backend } = await validator.validate(req);
    await backend.dispose();
  } catch (err) {
    assert.ok(err instanceof ModelRejectedError, `expected a rejection, got ${String(err)}`);
    assert.ok(loads - before <= 1);
    return err;
  } finally {
    req.compareWith?.release();
  }
  assert.fail('the model was accepted');
}

describe('model validation', () => {
  it('accepts a good model: loaded in a worker, warm at every batch size, golden set in range, shift reported', async () => {
    const bytes = await models.same();
    const req = await request(bytes, await manifestFor('1.1.0', bytes));
    const { backend, summary } = await validator.validate(req);
    req.compareWith?.release();
    try {
      assert.deepEqual(summary.batchSizes, [1, 2, 4, 8, 16]);
      assert.equal(summary.goldenRows, 32);
      assert.equal(summary.goldenSource, 'manifest');
      assert.deepEqual(summary.shift && [summary.shift.against, summary.shift.meanAbs, summary.shift.exceeded], [
        '1.0.0',
        0,
        false,
      ]);
      assert.deepEqual(backend.info.executionProviders, ['cpu']);
      assert.equal((await backend.run(new Float32Array(FEATURE_NAMES.length), 1)).scores.length, 1);
    } finally {
      await backend.dispose();
    }
  });

  it('refuses a corrupt file before loading it', async () => {
    const bytes = new TextEncoder().encode('this is not an onnx model, just text pretending to be one');
    const before = loads;
    const e = await rejected(await request(bytes, await manifestFor('1.1.0', bytes)));
    assert.deepEqual([e.check, e.code], ['signature', 'model_invalid']);
    assert.equal(loads, before, 'never handed to a worker');
  });

  it('refuses a wrong input/output signature, naming it', async () => {
    const bytes = models.wrongSignature();
    const e = await rejected(await request(bytes, await manifestFor('1.1.0', bytes)));
    assert.deepEqual([e.check, e.code, e.errors.map((x) => x.path)], ['signature', 'model_invalid', ['input.name']]);
  });

  it('refuses a sha256 mismatch with the manifest', async () => {
    const bytes = await models.same();
    const manifest = await manifestFor('1.1.0', bytes, { sha256: 'a'.repeat(64) });
    const e = await rejected(await request(bytes, manifest));
    assert.deepEqual([e.check, e.code], ['sha256', 'model_invalid']);
  });

  it('refuses a manifest whose features differ from the featurizer', async () => {
    const bytes = await models.same();
    const manifest = await manifestFor('1.1.0', bytes, { features: [...base.features].reverse() });
    const e = await rejected(await request(bytes, manifest));
    assert.deepEqual([e.check, e.errors.map((x) => x.path)], ['features', ['features']]);
  });

  it('refuses a model whose golden-set scores are out of range', async () => {
    const bytes = models.goldenFails();
    const manifest = await manifestFor('1.1.0', bytes, { golden: undefined, explanation: undefined });
    const e = await rejected(await request(bytes, manifest));
    assert.deepEqual([e.check, e.code], ['golden', 'model_invalid']);
    assert.match(e.message, /golden set failed/);
  });

  it('refuses a model that does not reproduce the golden scores its manifest records', async () => {
    const bytes = await models.same();
    const golden = base.golden as NonNullable<ModelManifest['golden']>;
    const manifest = await manifestFor('1.1.0', bytes, {
      golden: { inputs: golden.inputs, scores: golden.scores.map((s) => s + 0.05) },
    });
    const e = await rejected(await request(bytes, manifest));
    assert.equal(e.check, 'golden');
  });

  it('refuses a score shift beyond the bound, unless forced', async () => {
    const bytes = models.shifted();
    const manifest = await manifestFor('1.1.0', bytes, { golden: undefined, explanation: undefined });
    const e = await rejected(await request(bytes, manifest));
    assert.deepEqual([e.check, e.code, e.status], ['shift', 'model_shift_exceeded', 422]);
    const forced = await request(bytes, manifest, { forced: true });
    const { backend, summary } = await validator.validate(forced);
    forced.compareWith?.release();
    await backend.dispose();
    assert.equal(summary.forced, true);
    assert.equal(summary.shift?.exceeded, true);
    assert.ok((summary.shift?.meanAbs ?? 0) > 0.1);
  });

  it('loads a model in an isolated worker first when the serving factory would load it inline', async () => {
    const workers = batchedBackendFactory({
      mode: 'workers',
      workers: 1,
      batchMaxSize: 4,
      batchMaxSizeGpu: 4,
      batchWindowMs: 1,
      queueMax: 64,
      session: { executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' },
    });
    const probes: number[] = [];
    const isolated = new ModelValidator({
      sessions,
      features: FEATURE_NAMES,
      batchMaxSize: 4,
      batchMaxSizeGpu: 4,
      isolation: {
        factory: { load: (m) => (probes.push(m.bytes.length), workers.load(m)) },
        when: (n) => n < 256 * 1024,
      },
    });
    const bytes = await models.same();
    const req = await request(bytes, await manifestFor('1.1.0', bytes));
    const { backend } = await isolated.validate(req);
    req.compareWith?.release();
    await backend.dispose();
    assert.deepEqual(probes, [bytes.length]);
  });

  it('leaves the active version serving whatever it refuses', async () => {
    const bytes = models.goldenFails();
    await rejected(
      await request(bytes, await manifestFor('1.1.0', bytes, { golden: undefined, explanation: undefined })),
    );
    assert.equal(sessions.manifest?.version, '1.0.0');
    assert.equal((await sessions.probe()).ready, true);
    const lease = sessions.acquire();
    try {
      const { scores } = await lease.backend.run(new Float32Array(FEATURE_NAMES.length), 1);
      assert.equal(scores.length, 1);
      assert.ok(Number.isFinite(scores[0]), 'the active model still scores');
    } finally {
      lease.release();
    }
  });
});
