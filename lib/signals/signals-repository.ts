/**
 * Where signals documents are read from: `features/{name}/{version}.json` in a blob container (`SIGNALS_CONTAINER`,
 * default the models container), or folders laid out as `{name}/{version}.json` (on embedded defaults the models
 * folder's `features/`, where uploads land as in the container, then the shipped `signals/` folder). Every read is
 * capped at {@link MAX_SIGNALS_BYTES}.
 * @module
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { ContainerClient } from '@azure/storage-blob';
import { AppError } from '../errors/errors';
import { compareVersions } from '../models/model-folder';
import { MAX_SIGNALS_BYTES, SIGNALS_NAME_RE, SIGNALS_VERSION_RE } from './signals-document';

/** Parses a blob path `features/{name}/{version}.json` (leading container segments are ignored). */
export function parseSignalsPath(blobPath: string): { name: string; version: string } | undefined {
  const m = /(?:^|\/)features\/([^/]+)\/([^/]+)\.json$/.exec(blobPath);
  if (m === null || !SIGNALS_NAME_RE.test(m[1] as string) || !SIGNALS_VERSION_RE.test(m[2] as string)) return undefined;
  return { name: m[1] as string, version: m[2] as string };
}

/** The blob name of a signals version. */
export const signalsBlobName = (name: string, version: string): string => `features/${name}/${version}.json`;

/** Reads signals documents. */
export interface SignalsRepository {
  readonly description: string;
  /** The document's text. @throws AppError `not_found`, `payload_too_large`, `dependency_unavailable`. */
  read(name: string, version: string): Promise<string>;
  /** The versions present, ascending. */
  versions(name: string): Promise<string[]>;
  /** Where a version's document lives (a file path or `container/blob`), as rejections name it. */
  source(name: string, version: string): string;
}

function tooLarge(size: number): AppError {
  return new AppError('payload_too_large', `A signals document is at most ${MAX_SIGNALS_BYTES} bytes (${size} read).`, {
    transient: false,
    errors: [{ path: 'size', message: `must be at most ${MAX_SIGNALS_BYTES} bytes` }],
  });
}

const valid = (name: string, version: string): boolean =>
  SIGNALS_NAME_RE.test(name) && SIGNALS_VERSION_RE.test(version);

/**
 * Folders laid out as `{dir}/{name}/{version}.json`, searched in order. A version is read from the first folder that
 * has it; the versions are those of every folder.
 */
export class FolderSignalsRepository implements SignalsRepository {
  readonly description: string;
  private readonly dirs: readonly string[];
  constructor(dir: string | readonly string[]) {
    this.dirs = typeof dir === 'string' ? [dir] : dir;
    this.description = `folder ${this.dirs.join(', ')}`;
  }

  source(name: string, version: string): string {
    const files = this.dirs.map((d) => path.join(d, name, `${version}.json`));
    return files.find((f) => existsSync(f)) ?? files[0] ?? '';
  }

  async read(name: string, version: string): Promise<string> {
    if (!valid(name, version)) throw new AppError('not_found', 'No such signals version.');
    for (const dir of this.dirs) {
      const file = path.join(dir, name, `${version}.json`);
      const size = await stat(file).then(
        (s) => (s.isFile() ? s.size : undefined),
        () => undefined,
      );
      if (size === undefined) continue;
      if (size > MAX_SIGNALS_BYTES) throw tooLarge(size); // checked before the file is read
      const text = await readFile(file, 'utf8').catch(() => undefined);
      if (text === undefined) continue;
      if (Buffer.byteLength(text) > MAX_SIGNALS_BYTES) throw tooLarge(Buffer.byteLength(text));
      return text;
    }
    throw new AppError('not_found', `No signals ${name} ${version} in the signals folders.`);
  }

  async versions(name: string): Promise<string[]> {
    if (!SIGNALS_NAME_RE.test(name)) return [];
    const all = new Set<string>();
    for (const dir of this.dirs) {
      const files = await readdir(path.join(dir, name)).catch(() => [] as string[]);
      for (const f of files)
        if (f.endsWith('.json') && SIGNALS_VERSION_RE.test(f.slice(0, -5))) all.add(f.slice(0, -5));
    }
    return [...all].sort(compareVersions);
  }
}

/** A blob container holding `features/{name}/{version}.json`. */
export class BlobSignalsRepository implements SignalsRepository {
  readonly description: string;
  constructor(private readonly container: ContainerClient) {
    this.description = `blob container ${container.containerName}`;
  }

  source(name: string, version: string): string {
    return `${this.container.containerName}/${signalsBlobName(name, version)}`;
  }

  async read(name: string, version: string): Promise<string> {
    if (!valid(name, version)) throw new AppError('not_found', 'No such signals version.');
    const blob = this.container.getBlobClient(signalsBlobName(name, version));
    try {
      const props = await blob.getProperties();
      const size = props.contentLength ?? 0;
      if (size > MAX_SIGNALS_BYTES) throw tooLarge(size);
      return (await blob.downloadToBuffer(0, size)).toString('utf8');
    } catch (err) {
      if (err instanceof AppError) throw err;
      if ((err as { statusCode?: unknown }).statusCode === 404)
        throw new AppError('not_found', `No signals ${name} ${version} in the container.`, { cause: err });
      throw new AppError('dependency_unavailable', 'The signals container is unavailable.', {
        cause: err,
        transient: true,
        retryAfterSec: 5,
      });
    }
  }

  async versions(name: string): Promise<string[]> {
    const out: string[] = [];
    for await (const b of this.container.listBlobsFlat({ prefix: `features/${name}/` })) {
      const p = parseSignalsPath(b.name);
      if (p?.name === name) out.push(p.version);
      if (out.length >= 1000) break;
    }
    return out.sort(compareVersions);
  }
}
