/**
 * The models container in Azure Blob Storage (or Azurite), read with `@azure/storage-blob`, opened the one way every
 * kind opens its container (`lib/platform/object-storage.ts`).
 */
import type { TokenCredential } from '@azure/identity';
import type { ContainerClient, StoragePipelineOptions } from '@azure/storage-blob';
import { AppError } from '../errors/errors';
import { openContainer, type BlobStorageSettings } from '../platform/object-storage';
import { readBounded } from '../http/bounded-read';
import { manifestBlobName, modelBlobName, type ModelRef } from './model-path';
import {
  blobTooLarge,
  LIST_MAX_DEPTH,
  MANIFEST_MAX_BYTES,
  manifestTooLarge,
  modelTooLarge,
  type ModelBlob,
  type ModelFile,
  type ModelProperties,
  type ModelRepository,
} from './model-repository';

export { blobConfigured, type BlobStorageSettings } from '../platform/object-storage';

/** What the blob repository reports; the telemetry module records it as `scoring.external.duration{dependency=blob}`. */
export interface BlobRepositoryEvents {
  /**
   * One call to Blob Storage ended. `operation`: `download` (a model or manifest, timed until its body was
   * read or refused), `properties` or `list`; `ms`: its duration, milliseconds; `ok`: false when the service
   * or the network failed (the repository then throws `dependency_unavailable`); an absent blob (404) and a
   * refused oversize download are answers, so `ok` is true. Never carries the blob's name.
   */
  blobCall(e: {
    readonly operation: 'download' | 'properties' | 'list';
    readonly ms: number;
    readonly ok: boolean;
  }): void;
}

/** Options of {@link BlobModelRepository.create}. */
export interface BlobRepositoryOptions {
  /** For identity-based access. Default `DefaultAzureCredential`. */
  readonly credential?: TokenCredential;
  /** Storage client pipeline options (retries, HTTP client). Default the SDK's. */
  readonly pipeline?: StoragePipelineOptions;
  /** Timing of every call to the service. Default none. */
  readonly on?: Partial<BlobRepositoryEvents>;
  /** Monotonic clock, ms. Default `performance.now`. */
  readonly now?: () => number;
}

function statusOf(err: unknown): number | undefined {
  const s = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' ? s : undefined;
}

function unavailable(err: unknown): AppError {
  return new AppError('dependency_unavailable', 'The models container is unavailable.', {
    cause: err,
    transient: true,
    retryAfterSec: 5,
  });
}

/** Reads models from a blob container. */
export class BlobModelRepository implements ModelRepository {
  private readonly now: () => number;
  private constructor(
    private readonly client: ContainerClient,
    readonly container: string,
    readonly description: string,
    private readonly options: BlobRepositoryOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * @throws AppError `config_invalid` when neither a connection string nor a service URI is set, or the connection string is malformed.
   */
  static create(s: BlobStorageSettings, options: BlobRepositoryOptions = {}): BlobModelRepository {
    const { client, endpoint } = openContainer(s, s.container, options);
    return new BlobModelRepository(client, s.container, `blob container ${s.container} (${endpoint})`, options);
  }

  /** Runs one call to the service and reports its duration; `ok` unless it ends in `dependency_unavailable`. */
  private async timed<T>(operation: 'download' | 'properties' | 'list', call: () => Promise<T>): Promise<T> {
    const report = this.options.on?.blobCall;
    if (report === undefined) return call();
    const t0 = this.now();
    let ok = true;
    try {
      return await call();
    } catch (err) {
      ok = !(err instanceof AppError && err.code === 'dependency_unavailable');
      throw err;
    } finally {
      report({ operation, ms: this.now() - t0, ok });
    }
  }

  /**
   * Starts a download and checks the declared `Content-Length` before reading the body; the body is then
   * streamed through a byte counter (and the sha256). Past the cap the stream is destroyed.
   * @returns `undefined` for a blob that does not exist.
   */
  private download(
    name: string,
    maxBytes: number,
    tooBig: (size: number) => AppError,
    sha256: boolean,
  ): Promise<{ bytes: Uint8Array; sha256?: string } | undefined> {
    return this.timed('download', () => this.read(name, maxBytes, tooBig, sha256));
  }

  private async read(
    name: string,
    maxBytes: number,
    tooBig: (size: number) => AppError,
    sha256: boolean,
  ): Promise<{ bytes: Uint8Array; sha256?: string } | undefined> {
    let res;
    try {
      res = await this.client.getBlobClient(name).download(0);
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw unavailable(err);
    }
    const body = res.readableStreamBody as (NodeJS.ReadableStream & { destroy?: () => void }) | undefined;
    const declared = res.contentLength ?? 0;
    if (declared > maxBytes) {
      body?.destroy?.();
      throw tooBig(declared);
    }
    if (body === undefined) return { bytes: new Uint8Array(0) };
    try {
      return await readBounded(body as AsyncIterable<Uint8Array>, maxBytes, tooBig, { sha256 });
    } catch (err) {
      throw err instanceof AppError ? err : unavailable(err);
    }
  }

  async readModel(ref: ModelRef, maxBytes: number): Promise<ModelFile> {
    const r = await this.download(modelBlobName(ref), maxBytes, (n) => modelTooLarge(ref, n, maxBytes), true);
    if (r === undefined)
      throw new AppError('not_found', `Model ${ref.name}@${ref.version} is not in the container.`, {
        transient: false,
      });
    return { bytes: r.bytes, sha256: r.sha256 as string };
  }

  properties(ref: ModelRef): Promise<ModelProperties | undefined> {
    return this.timed('properties', async () => {
      try {
        const p = await this.client.getBlobClient(modelBlobName(ref)).getProperties();
        return { size: p.contentLength ?? 0, etag: p.etag ?? '', metadata: p.metadata ?? {} };
      } catch (err) {
        if (statusOf(err) === 404) return undefined;
        throw unavailable(err);
      }
    });
  }

  async readManifest(ref: ModelRef): Promise<string | undefined> {
    const r = await this.download(manifestBlobName(ref), MANIFEST_MAX_BYTES, (n) => manifestTooLarge(ref, n), false);
    return r === undefined ? undefined : Buffer.from(r.bytes).toString('utf8');
  }

  list(suffix = '.onnx'): Promise<ModelBlob[]> {
    return this.timed('list', () => this.listAll(suffix));
  }

  async readBlob(blobPath: string, maxBytes: number): Promise<Buffer> {
    const name = blobPath.startsWith(`${this.container}/`) ? blobPath.slice(this.container.length + 1) : '';
    if (name === '') throw new AppError('not_found', `${blobPath} is not in the container ${this.container}.`);
    const blob = this.client.getBlobClient(name);
    try {
      const props = await blob.getProperties();
      if ((props.contentLength ?? 0) > maxBytes) throw blobTooLarge(blobPath, maxBytes);
      return await blob.downloadToBuffer(0, props.contentLength ?? 0);
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (statusOf(err) === 404) throw new AppError('not_found', `${blobPath} is not in the container.`);
      throw unavailable(err);
    }
  }

  private async listAll(suffix: string): Promise<ModelBlob[]> {
    const out: ModelBlob[] = [];
    try {
      for await (const b of this.client.listBlobsFlat({ includeMetadata: true })) {
        if (!b.name.endsWith(suffix) || b.name.split('/').length - 1 > LIST_MAX_DEPTH) continue;
        out.push({
          blobPath: `${this.container}/${b.name}`,
          etag: b.properties.etag ?? '',
          size: b.properties.contentLength ?? 0,
          metadata: b.metadata ?? {},
          uri: this.client.getBlobClient(b.name).url,
        });
      }
    } catch (err) {
      throw unavailable(err);
    }
    return out;
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}
