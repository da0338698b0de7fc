/**
 * The learning store in Azure Blob Storage (or Azurite). Decision partitions are **append blobs**: each
 * batch is one `Append Block`, atomic and durable when it returns, readable at once, and several writers
 * (instances, restarts) can append to the same blob without a read-modify-commit. Staged blocks would need a
 * `Put Block List` of the whole list after every batch, and two writers committing lists would lose each
 * other's blocks. Labels are block blobs created with `If-None-Match: *` (idempotent). The container is opened the
 * one way every subsystem opens one (lib/platform/object-storage.ts: the `ModelStorage` settings).
 */
import type { ContainerClient } from '@azure/storage-blob';
import type { LearningStore } from './learning-store';
import { openContainer, type BlobStorageSettings, type OpenContainerOptions } from '../platform/object-storage';

/** Largest `Append Block` body, bytes (4 MiB on every service version). */
const APPEND_MAX_BYTES = 4 * 1024 * 1024;

/** Options of {@link BlobLearningStore.create}: the credential and the storage pipeline (retries, HTTP client). */
export type BlobStoreOptions = Pick<OpenContainerOptions, 'credential' | 'pipeline'>;

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

  /**
   * The store in the container `s.container` of the storage account `s` names.
   * @throws AppError `config_invalid` when neither a connection string nor a service URI is set, or the connection
   *   string is malformed.
   */
  static create(s: BlobStorageSettings, options: BlobStoreOptions = {}): BlobLearningStore {
    const { client } = openContainer(s, s.container, { ...options, label: 'the learning store' });
    return new BlobLearningStore(client);
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
