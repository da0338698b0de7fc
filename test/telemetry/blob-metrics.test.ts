/**
 * `scoring.external.duration{dependency=blob}`: every call the models container makes to Blob Storage is
 * timed (downloads until the body is read, properties, listing). Against Azurite started here on a free port,
 * with the real `@azure/storage-blob` client; the composition-root test reads the metric through an
 * in-memory metric reader.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MeterProvider, type Histogram } from '@opentelemetry/sdk-metrics';
import { createEngine } from '../../lib/app';
import { testConfig } from '../support/config';
import { AppError } from '../../lib/errors/errors';
import { BlobModelRepository, type BlobRepositoryEvents } from '../../lib/model-rollout/blob-model-repository';
import { silentLogger } from '../../lib/platform/logger';
import { Telemetry } from '../../lib/telemetry/telemetry';
import { freePort, startAzurite, type Azurite } from '../model-rollout/support/azurite';
import { bundledBytes } from '../model-rollout/support/models';
import { BUNDLED_MODELS } from '../support/models';
import { collectMetrics, TestReader } from './support';

type BlobCall = Parameters<BlobRepositoryEvents['blobCall']>[0];

const settings = (connectionString: string) => ({
  connectionString,
  blobServiceUri: undefined,
  clientId: undefined,
  container: 'models',
});

describe('blob storage calls as scoring.external.duration{dependency=blob}', () => {
  let azurite: Azurite;

  before(async () => {
    azurite = await startAzurite();
    const container = await azurite.container('models');
    await container.getBlockBlobClient('fraud/1.1.0.onnx').uploadData(await bundledBytes());
  });
  after(async () => {
    await azurite?.stop();
  });

  it('the repository reports each call with its duration on the injected clock, in ms', async () => {
    const calls: BlobCall[] = [];
    const ticks = [1000, 1012.5, 2000, 2001.25, 3000, 3000.5];
    const repo = BlobModelRepository.create(settings(azurite.connectionString), {
      on: { blobCall: (e) => calls.push(e) },
      now: () => ticks.shift() ?? assert.fail('the clock was read more often than twice per call'),
    });
    const file = await repo.readModel({ name: 'fraud', version: '1.1.0' }, 10 * 1024 * 1024);
    assert.ok(file.bytes.length > 0);
    assert.equal(await repo.properties({ name: 'fraud', version: '9.9.9' }), undefined, 'absent: a 404');
    assert.equal((await repo.list()).length, 1);
    assert.deepEqual(calls, [
      { operation: 'download', ms: 12.5, ok: true },
      { operation: 'properties', ms: 1.25, ok: true }, // an absent blob is an answer, not a failure
      { operation: 'list', ms: 0.5, ok: true },
    ]);
  });

  it('a call the service never answers is reported as not ok', async () => {
    const calls: BlobCall[] = [];
    const closed = await freePort(); // nothing listens there
    const conn = azurite.connectionString.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${closed}`);
    const repo = BlobModelRepository.create(settings(conn), {
      pipeline: { retryOptions: { maxTries: 1 } },
      on: { blobCall: (e) => calls.push(e) },
    });
    await assert.rejects(
      repo.readModel({ name: 'fraud', version: '1.1.0' }, 1024),
      (e: unknown) => e instanceof AppError && e.code === 'dependency_unavailable',
    );
    assert.equal(calls.length, 1);
    assert.equal(calls[0]?.operation, 'download');
    assert.equal(calls[0]?.ok, false);
    assert.ok((calls[0]?.ms ?? -1) >= 0);
  });

  it('wired by the composition root: a model upload read from the container records blob durations in ms', async () => {
    const reader = new TestReader();
    const telemetry = await Telemetry.create({ meterProvider: new MeterProvider({ readers: [reader] }) });
    const config = testConfig({
      ModelStorage: azurite.connectionString,
      MODELS_CONTAINER: 'models',
      MODEL_DIR: BUNDLED_MODELS,
      INFERENCE_WORKERS: '1',
      LOG_LEVEL: 'error',
    });
    const engine = await createEngine(config, { telemetry, logger: silentLogger });
    try {
      await engine.start();
      const blob = async () => {
        const m = (await collectMetrics(reader)).get('scoring.external.duration');
        return { unit: m?.unit, points: (m?.points ?? []).filter((p) => p.attributes['dependency'] === 'blob') };
      };
      const before = (await blob()).points.reduce((n, p) => n + (p.value as Histogram).count, 0);
      const outcome = await engine.models.handleUpload({ blobPath: 'models/fraud/1.1.0.onnx' });
      assert.equal(outcome.kind, 'published', JSON.stringify(outcome));
      const { unit, points } = await blob();
      assert.equal(unit, 'ms');
      assert.deepEqual(
        points.map((p) => p.attributes),
        [{ dependency: 'blob', ok: true }],
        'one series: no blob name, no model name',
      );
      const h = points[0]?.value as Histogram;
      // the upload read the blob's properties, the model and its (absent) manifest
      assert.ok(h.count - before >= 3, `blob calls recorded: ${h.count - before}`);
      assert.ok((h.sum ?? 0) > 0);
    } finally {
      await engine.dispose();
    }
  });
});
