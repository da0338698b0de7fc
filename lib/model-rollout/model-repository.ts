/**
 * Where uploaded models live: the blob container in Azure (or Azurite), or a local folder with the same
 * layout (`{name}/{version}.onnx` + optional `{name}/{version}.json`). Every instance reads the version the
 * fleet pointer names from here.
 */
import { createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AppError } from '../errors/errors';
import { readBounded } from '../http/bounded-read';
import { manifestBlobName, modelBlobName, type ModelRef } from './model-path';

/** One model file in the repository. */
export interface ModelBlob {
  /** Path as a blob trigger reports it: `{container}/{name}/{version}.onnx`. */
  readonly blobPath: string;
  /** Changes whenever the content changes (blob ETag; mtime + size for a folder). */
  readonly etag: string;
  /** Bytes. */
  readonly size: number;
  /** Blob metadata (e.g. `force=true`); a folder's `{version}.metadata.json` sidecar. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Location as a URL (`Uri` of the trigger metadata). */
  readonly uri: string;
}

/** Largest manifest (`{version}.json`) read, bytes: 1 MiB. Larger ones are rejected unread. */
export const MANIFEST_MAX_BYTES = 1024 * 1024;

/** A model file as read: its bytes and their sha256, computed while streaming. */
export interface ModelFile {
  readonly bytes: Uint8Array;
  /** Lower-case hex sha256 of `bytes`. */
  readonly sha256: string;
}

/** What the container says about a model file without reading it. */
export interface ModelProperties {
  /** Bytes. */
  readonly size: number;
  readonly etag: string;
  readonly metadata: Readonly<Record<string, string>>;
}

/** Read access to the models container. */
export interface ModelRepository {
  /** How logs name it (never a secret), e.g. `blob container models (https://acct.blob.core.windows.net)`. */
  readonly description: string;
  /** Container name (`MODELS_CONTAINER`, default `models`). */
  readonly container: string;
  /**
   * Reads a model file, streaming: its declared size is checked before the body is read, the bytes are
   * counted while they arrive (the read stops as soon as they pass `maxBytes`), and the sha256 is
   * computed on the way.
   * @param maxBytes refuse files larger than this (`model_invalid`), bytes.
   * @throws AppError `not_found` (absent), `model_invalid` (too large), `dependency_unavailable` (transient).
   */
  readModel(ref: ModelRef, maxBytes: number): Promise<ModelFile>;
  /** Size, ETag and metadata of a model file without reading it; `undefined` when absent. @throws AppError `dependency_unavailable`. */
  properties(ref: ModelRef): Promise<ModelProperties | undefined>;
  /**
   * The manifest uploaded with a version, if any (at most {@link MANIFEST_MAX_BYTES}, read with a cap).
   * @throws AppError `model_invalid` (too large), `dependency_unavailable` (transient).
   */
  readManifest(ref: ModelRef): Promise<string | undefined>;
  /**
   * Every file of the container whose name ends with `suffix` (default `.onnx`: the model files), at most
   * {@link LIST_MAX_DEPTH} folders deep: the local host's blob feeder polls this to play every blob trigger.
   */
  list(suffix?: string): Promise<ModelBlob[]>;
  /**
   * The content of one file of the container, by its blob path (`{container}/…`), read with a cap (the local host's
   * blob feeder passes it to a trigger that takes the blob's content).
   * @throws AppError `not_found`, `payload_too_large` (over `maxBytes`), `dependency_unavailable`.
   */
  readBlob(blobPath: string, maxBytes: number): Promise<Buffer>;
  dispose(): Promise<void>;
}

/** How many folders deep {@link ModelRepository.list} looks (`rulesets/{name}/{version}.json` is 3). */
export const LIST_MAX_DEPTH = 4;

/** A blob over the cap of {@link ModelRepository.readBlob}. */
export function blobTooLarge(blobPath: string, maxBytes: number): AppError {
  return new AppError('payload_too_large', `${blobPath} is over ${maxBytes} bytes.`);
}

/** A model file larger than the limit. */
export function modelTooLarge(ref: ModelRef, size: number, maxBytes: number): AppError {
  return new AppError(
    'model_invalid',
    `Model ${ref.name}@${ref.version} is ${size} bytes; the limit is ${maxBytes} bytes.`,
    {
      transient: false,
      errors: [{ path: 'size', message: `must be at most ${maxBytes} bytes (MODEL_MAX_BYTES)` }],
    },
  );
}

/** A manifest larger than {@link MANIFEST_MAX_BYTES}. */
export function manifestTooLarge(ref: ModelRef, size: number): AppError {
  return new AppError(
    'model_invalid',
    `The manifest of ${ref.name}@${ref.version} is over ${MANIFEST_MAX_BYTES} bytes (${size} bytes or more).`,
    { transient: false, errors: [{ path: 'manifest', message: `must be at most ${MANIFEST_MAX_BYTES} bytes` }] },
  );
}

/** A folder laid out like the container (the embedded default: the bundled `models/` folder or `MODEL_DIR`). */
export class FolderModelRepository implements ModelRepository {
  /**
   * @param dir the folder, e.g. `models/`.
   * @param container the name reported in blob paths (`MODELS_CONTAINER`, default `models`).
   */
  constructor(
    readonly dir: string,
    readonly container: string,
  ) {}

  get description(): string {
    return `local folder ${this.dir}`;
  }

  async readModel(ref: ModelRef, maxBytes: number): Promise<ModelFile> {
    const file = path.join(this.dir, modelBlobName(ref));
    const stat = await fs.stat(file).catch(() => undefined);
    if (stat === undefined)
      throw new AppError('not_found', `Model ${ref.name}@${ref.version} is not in the models folder.`, {
        transient: false,
      });
    if (stat.size > maxBytes) throw modelTooLarge(ref, stat.size, maxBytes);
    const r = await readBounded(createReadStream(file), maxBytes, (n) => modelTooLarge(ref, n, maxBytes), {
      sha256: true,
    });
    return { bytes: r.bytes, sha256: r.sha256 as string };
  }

  async properties(ref: ModelRef): Promise<ModelProperties | undefined> {
    const file = path.join(this.dir, modelBlobName(ref));
    const stat = await fs.stat(file).catch(() => undefined);
    if (stat === undefined || !stat.isFile()) return undefined;
    return { size: stat.size, etag: `${stat.mtimeMs}-${stat.size}`, metadata: await this.metadata(file.slice(0, -5)) };
  }

  async readManifest(ref: ModelRef): Promise<string | undefined> {
    const file = path.join(this.dir, manifestBlobName(ref));
    const stat = await fs.stat(file).catch(() => undefined);
    if (stat === undefined) return undefined;
    if (stat.size > MANIFEST_MAX_BYTES) throw manifestTooLarge(ref, stat.size);
    const r = await readBounded(createReadStream(file), MANIFEST_MAX_BYTES, (n) => manifestTooLarge(ref, n));
    return Buffer.from(r.bytes).toString('utf8');
  }

  async list(suffix = '.onnx'): Promise<ModelBlob[]> {
    const out: ModelBlob[] = [];
    // every `…/{b}{suffix}` as deep as a trigger path reaches; the handlers reject bad names
    const walk = async (rel: string, depth: number): Promise<void> => {
      const entries = await fs.readdir(path.join(this.dir, rel), { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const child = rel === '' ? e.name : `${rel}/${e.name}`;
        if (e.isDirectory()) {
          if (depth < LIST_MAX_DEPTH) await walk(child, depth + 1);
          continue;
        }
        if (!e.isFile() || !e.name.endsWith(suffix) || rel === '') continue;
        const full = path.join(this.dir, child);
        const stat = await fs.stat(full).catch(() => undefined);
        if (stat === undefined) continue;
        out.push({
          blobPath: `${this.container}/${child}`,
          etag: `${stat.mtimeMs}-${stat.size}`,
          size: stat.size,
          metadata: await this.metadata(full.slice(0, -suffix.length)),
          uri: `file://${full}`,
        });
      }
    };
    await walk('', 1);
    return out;
  }

  async readBlob(blobPath: string, maxBytes: number): Promise<Buffer> {
    const rel = blobPath.startsWith(`${this.container}/`) ? blobPath.slice(this.container.length + 1) : '';
    const full = path.resolve(this.dir, rel);
    if (rel === '' || !full.startsWith(`${path.resolve(this.dir)}${path.sep}`))
      throw new AppError('not_found', `${blobPath} is not in the models folder.`);
    const stat = await fs.stat(full).catch(() => undefined);
    if (stat === undefined || !stat.isFile())
      throw new AppError('not_found', `${blobPath} is not in the models folder.`);
    if (stat.size > maxBytes) throw blobTooLarge(blobPath, maxBytes);
    return fs.readFile(full);
  }

  /** The `{version}.metadata.json` sidecar next to `{base}.onnx`: string values only. */
  private async metadata(base: string): Promise<Record<string, string>> {
    const text = await fs.readFile(`${base}.metadata.json`, 'utf8').catch(() => undefined);
    if (text === undefined) return {};
    try {
      const raw = JSON.parse(text) as unknown;
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
      return Object.fromEntries(Object.entries(raw).filter((e): e is [string, string] => typeof e[1] === 'string'));
    } catch {
      return {};
    }
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}
