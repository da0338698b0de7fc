/**
 * Bounded reads of the models container: model files stream with a byte cap and their sha256 is computed
 * while streaming; manifests are capped at 1 MiB; the blob trigger (deferred binding, through the real
 * programming model on the local host) checks an upload's size from the blob's properties and never
 * downloads an oversize blob. Against Azurite, with the real `@azure/storage-blob` client; a recording
 * HTTP client underneath shows which requests reached the service.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ContainerClient } from '@azure/storage-blob';
import { configureSharedEngine, sharedEngine } from '../../lib/app';
import { AppError } from '../../lib/errors/errors';
import { BlobModelRepository } from '../../lib/model-rollout/blob-model-repository';
import { blobBindingData } from '../../lib/model-rollout/blob-reference';
import {
  FolderModelRepository,
  MANIFEST_MAX_BYTES,
  type ModelRepository,
} from '../../lib/model-rollout/model-repository';
import type { LocalHost } from '../../local/host';
import { DeferredBinding } from '../../local/rpc';
import { startHost } from '../support/local-host';
import { BUNDLED_MODELS } from '../support/models';
import { startAzurite, type Azurite } from './support/azurite';

const MAX_MODEL = 4096;
let azurite: Azurite;
let container: ContainerClient;
let blobRepo: BlobModelRepository;
let folderRepo: FolderModelRepository;
let folder: string;
let host: LocalHost;
const requests: { method: string; path: string; bytes: number }[] = [];
let proxy: Awaited<ReturnType<typeof recordingProxy>>;

/**
 * A recording proxy in front of Azurite: forwards every request unchanged (Shared Key signs path and
 * headers, not the host) and records its method, path and the response bytes sent back.
 */
async function recordingProxy(target: string): Promise<{ connectionString: string; close: () => Promise<void> }> {
  const port = Number(/BlobEndpoint=http:\/\/127\.0\.0\.1:(\d+)/.exec(target)?.[1]);
  const server = http.createServer((req, res) => {
    const entry = { method: req.method ?? '', path: new URL(req.url ?? '/', 'http://x').pathname, bytes: 0 };
    requests.push(entry);
    const up = http.request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.on('data', (c: Buffer) => (entry.bytes += c.length));
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const own = (server.address() as AddressInfo).port;
  return {
    connectionString: target.replace(`127.0.0.1:${port}`, `127.0.0.1:${own}`),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function put(name: string, bytes: Uint8Array): Promise<void> {
  await container.getBlockBlobClient(name).uploadData(bytes);
  await fs.mkdir(path.join(folder, path.dirname(name)), { recursive: true });
  await fs.writeFile(path.join(folder, name), bytes);
}

const code =
  (c: string, field?: string) =>
  (e: unknown): boolean =>
    e instanceof AppError && e.code === c && (field === undefined || e.errors.some((x) => x.path === field));

before(async () => {
  azurite = await startAzurite();
  container = await azurite.container('models');
  folder = await fs.mkdtemp(path.join(os.tmpdir(), 'bounded-'));
  proxy = await recordingProxy(azurite.connectionString);
  const settings = { connectionString: proxy.connectionString, blobServiceUri: undefined, clientId: undefined };
  blobRepo = BlobModelRepository.create({ ...settings, container: 'models' });
  folderRepo = new FolderModelRepository(folder, 'models');
  for (const k of ['REDIS_URL', 'AzureWebJobsStorage']) delete process.env[k];
  Object.assign(process.env, {
    ModelStorage: azurite.connectionString,
    MODELS_CONTAINER: 'models',
    MODEL_DIR: BUNDLED_MODELS,
    MODEL_MAX_BYTES: String(MAX_MODEL),
    INFERENCE_WORKERS: '1',
    LOG_LEVEL: 'error',
  });
  configureSharedEngine({ rollout: { repository: blobRepo } });
  host = await startHost();
  await (await sharedEngine()).start();
});
after(async () => {
  await host?.dispose();
  await proxy?.close();
  await azurite?.stop();
  await fs.rm(folder, { recursive: true, force: true });
});

describe('bounded reads of the models container', () => {
  for (const [kind, repo] of [
    ['blob', (): ModelRepository => blobRepo],
    ['folder', (): ModelRepository => folderRepo],
  ] as const) {
    it(`${kind}: streams a model with its sha256 computed on the way, and refuses one byte over the cap`, async () => {
      const bytes = randomBytes(300 * 1024 + 17);
      await put(`fraud/2.0.0.onnx`, bytes);
      const ref = { name: 'fraud', version: '2.0.0' };
      const file = await repo().readModel(ref, bytes.length);
      assert.ok(Buffer.from(file.bytes).equals(bytes));
      assert.equal(file.sha256, createHash('sha256').update(bytes).digest('hex'));
      await assert.rejects(repo().readModel(ref, bytes.length - 1), code('model_invalid', 'size'));
      await assert.rejects(repo().readModel({ name: 'fraud', version: '9.9.9' }, 1e6), code('not_found'));
    });

    it(`${kind}: refuses a manifest over ${MANIFEST_MAX_BYTES} bytes and reads one at the cap`, async () => {
      const pad = (n: number): Buffer => Buffer.from(JSON.stringify({ x: 'y'.repeat(n - 10) }).padEnd(n, ' '));
      await put('fraud/2.0.1.json', pad(MANIFEST_MAX_BYTES + 1));
      await assert.rejects(repo().readManifest({ name: 'fraud', version: '2.0.1' }), code('model_invalid', 'manifest'));
      await put('fraud/2.0.2.json', pad(MANIFEST_MAX_BYTES));
      assert.equal((await repo().readManifest({ name: 'fraud', version: '2.0.2' }))?.length, MANIFEST_MAX_BYTES);
    });
  }

  it('blob: a refused download stops at the headers; the rest of the blob is never transferred', async () => {
    const big = randomBytes(16 * 1024 * 1024);
    await container.getBlockBlobClient('fraud/2.9.0.onnx').uploadData(big);
    requests.length = 0;
    await assert.rejects(
      blobRepo.readModel({ name: 'fraud', version: '2.9.0' }, 1024 * 1024),
      code('model_invalid', 'size'),
    );
    const sent = requests.filter((r) => r.path.endsWith('/fraud/2.9.0.onnx')).reduce((n, r) => n + r.bytes, 0);
    assert.ok(sent < big.length / 2, `the refused download must stop early (${sent} of ${big.length} bytes sent)`);
  });

  it('the blob trigger gets a reference (deferred binding) and rejects an oversize blob from its properties, never downloading it', async () => {
    const fn = host.functions.find((f) => f.name === 'modelBlob');
    assert.equal((fn?.trigger['properties'] as { supportsDeferredBinding?: string }).supportsDeferredBinding, 'true');
    await put('fraud/3.0.0.onnx', randomBytes(64 * 1024));
    requests.length = 0;
    await host.invoke('modelBlob', new DeferredBinding(blobBindingData('ModelStorage', 'models', 'fraud/3.0.0.onnx')), {
      BlobTrigger: 'models/fraud/3.0.0.onnx',
    });
    const rejection = (await (await sharedEngine()).models.status('fraud')).rejections[0];
    assert.equal(rejection?.version, '3.0.0');
    assert.equal(rejection?.check, 'size');
    const touched = requests.filter((r) => r.path.endsWith('/models/fraud/3.0.0.onnx')).map((r) => r.method);
    assert.deepEqual(touched, ['HEAD'], 'only the properties were read');
  });
});
