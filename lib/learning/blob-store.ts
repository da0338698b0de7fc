/**
 * The learning store in Azure Blob Storage (or Azurite). Decision partitions are **append blobs**: each
 * batch is one `Append Block`, atomic and durable when it returns, readable at once, and several writers
 * (instances, restarts) can append to the same blob without a read-modify-commit. Staged blocks would need a
 * `Put Block List` of the whole list after every batch, and two writers committing lists would lose each
 * other's blocks. Labels are block blobs created with `If-None-Match: *` (idempotent).
 */
import type { TokenCredential } from '@azure/identity';
import type { BlobServiceClient, ContainerClient, StoragePipelineOptions } from '@azure/storage-blob';
import type { LearningStore } from './learning-store';
import { azureCredential } from '../platform/credential';

/** Largest `Append Block` body, bytes (4 MiB on every service version). */
const APPEND_MAX_BYTES = 4 * 1024 * 1024;

/** How to reach the storage account (the models' account: `ModelStorage*`). */
export interface BlobStoreSettings {
  readonly connectionString: string | undefined;
  readonly blobServiceUri: string | undefined;
  readonly clientId: string | undefined;
  readonly container: string;
}

/** Options of {@link BlobLearningStore.create}. */
export interface BlobStoreOptions {
  /** For identity-based access. Default `DefaultAzureCredential`. */
  readonly credential?: TokenCredential;
  readonly pipeline?: StoragePipelineOptions;
}

function status(err: unknown): number | undefined {
  const s = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' ? s : undefined;
}

/** Splits JSON Lines text into chunks of whole lines of at most {@link APPEND_MAX_BYTES}. */
function chunks(text: string): Buffer[] {
  const all = Buffer.from(text, 'utf8');
  if (all.length <= APPEND_MAX_BYTES) return [all];
  const out: Buffer[] = [];
  let start = 0;
  while (start < all.length) {
    let end = Math.min(start + APPEND_MAX_BYTES, all.length);
    if (end < all.length) {
      const nl = all.lastIndexOf(0x0a, end - 1);
      end = nl >= start ? nl + 1 : end;
    }
    out.push(all.subarray(start, end));
    start = end;
  }
  return out;
}

/** The learning store in a blob container. */
export class BlobLearningStore implements LearningStore {
  private ready: Promise<unknown> | undefined;
  /** Append blobs this process already created (a bounded set: one per hour and writer). */
  private readonly created = new Set<string>();

  private constructor(private readonly container: ContainerClient) {}

  /** @throws Error when neither a connection string nor a service URI is set. */
  static create(s: BlobStoreSettings, options: BlobStoreOptions = {}): BlobLearningStore {
    // loaded only when a storage account is configured (the local folder needs no SDK)
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { BlobServiceClient: Client } = require('@azure/storage-blob') as typeof import('@azure/storage-blob');
    let service: BlobServiceClient;
    if (s.connectionString !== undefined) service = Client.fromConnectionString(s.connectionString, options.pipeline);
    else if (s.blobServiceUri !== undefined) {
      const cred = options.credential ?? azureCredential(s.clientId);
      service = new Client(s.blobServiceUri, cred, options.pipeline);
    } else throw new Error('The decision log store needs a connection string or a blob service URI.');
    return new BlobLearningStore(service.getContainerClient(s.container));
  }

  /** Creates the container once (a failure is retried on the next call). */
  private ensureContainer(): Promise<unknown> {
    this.ready ??= this.container.createIfNotExists().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  async append(name: string, text: string): Promise<void> {
    await this.ensureContainer();
    const blob = this.container.getAppendBlobClient(name);
    if (!this.created.has(name)) {
      await blob.createIfNotExists({ blobHTTPHeaders: { blobContentType: 'application/x-ndjson' } });
      if (this.created.size > 10_000) this.created.clear();
      this.created.add(name);
    }
    for (const c of chunks(text)) {
      try {
        await blob.appendBlock(c, c.length);
      } catch (err) {
        if (status(err) === 404) this.created.delete(name); // erased meanwhile: recreate on the next batch
        throw err;
      }
    }
  }

  async createIfAbsent(name: string, text: string): Promise<boolean> {
    await this.ensureContainer();
    try {
      await this.container
        .getBlockBlobClient(name)
        .upload(text, Buffer.byteLength(text), { conditions: { ifNoneMatch: '*' } });
      return true;
    } catch (err) {
      if (status(err) === 409 || status(err) === 412) return false;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    await this.ensureContainer();
    const out: string[] = [];
    for await (const b of this.container.listBlobsFlat({ prefix })) out.push(b.name);
    return out.sort();
  }

  async read(name: string): Promise<string | undefined> {
    await this.ensureContainer();
    try {
      return (await this.container.getBlobClient(name).downloadToBuffer()).toString('utf8');
    } catch (err) {
      if (status(err) === 404) return undefined;
      throw err;
    }
  }

  async replace(name: string, text: string): Promise<void> {
    await this.ensureContainer();
    await this.container.getBlobClient(name).deleteIfExists();
    this.created.delete(name);
    if (text !== '') await this.append(name, text);
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}
