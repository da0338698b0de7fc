/**
 * The models container in Azure Blob Storage (or Azurite), read with `@azure/storage-blob`: by connection
 * string (`UseDevelopmentStorage=true` for Azurite), or identity-based with `{blobServiceUri}` and
 * `DefaultAzureCredential` (a user-assigned managed identity when a client id is given).
 */
import type { TokenCredential } from '@azure/identity';
import type { BlobServiceClient, ContainerClient, StoragePipelineOptions } from '@azure/storage-blob';
import { AppError } from '../errors/errors';
import { readBounded } from '../http/bounded-read';
import { manifestBlobName, modelBlobName, type ModelRef } from './model-path';
import {
  MANIFEST_MAX_BYTES,
  manifestTooLarge,
  tooLarge,
  type ModelBlob,
  type ModelFile,
  type ModelProperties,
  type ModelRepository,
} from './model-repository';

/** How to reach the storage account holding the models container. */
export interface BlobStorageSettings {
  /** A connection string (`ModelStorage`, or `AzureWebJobsStorage` as a fallback), e.g. `UseDevelopmentStorage=true`. */
  readonly connectionString: string | undefined;
  /** Identity-based: `ModelStorage__blobServiceUri`, e.g. `https://acct.blob.core.windows.net`. */
  readonly blobServiceUri: string | undefined;
  /** Client id of a user-assigned managed identity (`ModelStorage__clientId`). */
  readonly clientId: string | undefined;
  /** Container name (`MODELS_CONTAINER`, default `models`). */
  readonly container: string;
}

/** Whether the settings name a storage account (else the local folder is the repository). */
export function blobConfigured(s: BlobStorageSettings): boolean {
  return s.connectionString !== undefined || s.blobServiceUri !== undefined;
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
  private constructor(
    private readonly client: ContainerClient,
    readonly container: string,
    readonly description: string,
  ) {}

  /**
   * @param credential for identity-based access; default `DefaultAzureCredential`.
   * @throws AppError `config_invalid` when neither a connection string nor a service URI is set, or the connection string is malformed.
   */
  static create(
    s: BlobStorageSettings,
    credential?: TokenCredential,
    pipeline: StoragePipelineOptions = {},
  ): BlobModelRepository {
    // The SDK loads only when a storage account is configured, not on every start (the local folder needs none).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { BlobServiceClient: Client } = require('@azure/storage-blob') as typeof import('@azure/storage-blob');
    let service: BlobServiceClient;
    if (s.connectionString !== undefined) {
      try {
        service = Client.fromConnectionString(s.connectionString, pipeline);
      } catch (err) {
        throw new AppError('config_invalid', 'The model storage connection string is not valid.', { cause: err });
      }
    } else if (s.blobServiceUri !== undefined) {
      const cred =
        credential ??
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        new (require('@azure/identity') as typeof import('@azure/identity')).DefaultAzureCredential(
          s.clientId === undefined ? {} : { managedIdentityClientId: s.clientId },
        );
      service = new Client(s.blobServiceUri, cred, pipeline);
    } else {
      throw new AppError(
        'config_invalid',
        'Model storage needs ModelStorage (connection string) or ModelStorage__blobServiceUri.',
      );
    }
    const endpoint = new URL(service.url);
    return new BlobModelRepository(
      service.getContainerClient(s.container),
      s.container,
      `blob container ${s.container} (${endpoint.origin}${endpoint.pathname.replace(/\/$/, '')})`,
    );
  }

  /**
   * Starts a download and checks the declared `Content-Length` before reading the body; the body is then
   * streamed through a byte counter (and the sha256). Past the cap the stream is destroyed.
   * @returns `undefined` for a blob that does not exist.
   */
  private async download(
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
    const r = await this.download(modelBlobName(ref), maxBytes, (n) => tooLarge(ref, n, maxBytes), true);
    if (r === undefined)
      throw new AppError('not_found', `Model ${ref.name}@${ref.version} is not in the container.`, {
        transient: false,
      });
    return { bytes: r.bytes, sha256: r.sha256 as string };
  }

  async properties(ref: ModelRef): Promise<ModelProperties | undefined> {
    try {
      const p = await this.client.getBlobClient(modelBlobName(ref)).getProperties();
      return { size: p.contentLength ?? 0, etag: p.etag ?? '', metadata: p.metadata ?? {} };
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw unavailable(err);
    }
  }

  async readManifest(ref: ModelRef): Promise<string | undefined> {
    const r = await this.download(manifestBlobName(ref), MANIFEST_MAX_BYTES, (n) => manifestTooLarge(ref, n), false);
    return r === undefined ? undefined : Buffer.from(r.bytes).toString('utf8');
  }

  async list(): Promise<ModelBlob[]> {
    const out: ModelBlob[] = [];
    try {
      for await (const b of this.client.listBlobsFlat({ includeMetadata: true })) {
        if (!b.name.endsWith('.onnx')) continue;
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
