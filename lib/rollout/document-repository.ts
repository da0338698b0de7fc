/**
 * The one blob-or-folder store of whole-document kinds (rulesets, signals): `{prefix}/{name}/{version}.json` in a
 * blob container, or folders laid out as `{name}/{version}.json` (on embedded defaults the models folder's
 * `{prefix}/`, where uploads land as in the container, then the shipped folder). Every read is capped at the kind's
 * `maxBytes`, checked before the content is read. A kind supplies its {@link DocumentLayout}.
 * @module
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { TokenCredential } from '@azure/identity';
import type { ContainerClient } from '@azure/storage-blob';
import { AppError } from '../errors/errors';
import { compareVersions } from '../models/model-folder';
import { blobConfigured, openContainer, type BlobStorageSettings } from '../platform/object-storage';

/** Where and how large a kind's documents are. */
export interface DocumentLayout {
  /** How messages name a document, e.g. `ruleset`. */
  readonly label: string;
  /** The blob path's first segment, e.g. `rulesets` (`rulesets/{name}/{version}.json`). */
  readonly prefix: string;
  /** Largest document accepted, bytes. */
  readonly maxBytes: number;
  readonly nameRe: RegExp;
  readonly versionRe: RegExp;
}

/** Reads the documents of one kind. */
export interface DocumentRepository {
  readonly description: string;
  /** The document's text. @throws AppError `not_found`, `payload_too_large`, `dependency_unavailable`. */
  read(name: string, version: string): Promise<string>;
  /** The versions present, ascending. */
  versions(name: string): Promise<string[]>;
  /** Where a version's document lives (a file path or `container/blob`), as rejections name it. */
  source(name: string, version: string): string;
}

/** Parses a blob path `{prefix}/{name}/{version}.json` (leading container segments are ignored). */
export function parseDocumentPath(
  layout: DocumentLayout,
  blobPath: string,
): { name: string; version: string } | undefined {
  const m = new RegExp(`(?:^|/)${layout.prefix}/([^/]+)/([^/]+)\\.json$`).exec(blobPath);
  if (m === null || !layout.nameRe.test(m[1] as string) || !layout.versionRe.test(m[2] as string)) return undefined;
  return { name: m[1] as string, version: m[2] as string };
}

/** The blob name of a version. */
export const documentBlobName = (layout: DocumentLayout, name: string, version: string): string =>
  `${layout.prefix}/${name}/${version}.json`;

function tooLarge(layout: DocumentLayout, size: number): AppError {
  return new AppError('payload_too_large', `A ${layout.label} is at most ${layout.maxBytes} bytes (${size} read).`, {
    transient: false,
    errors: [{ path: 'size', message: `must be at most ${layout.maxBytes} bytes` }],
  });
}

const valid = (layout: DocumentLayout, name: string, version: string): boolean =>
  layout.nameRe.test(name) && layout.versionRe.test(version);

/**
 * Folders laid out as `{dir}/{name}/{version}.json`, searched in order. A version is read from the first folder that
 * has it; the versions are those of every folder.
 */
export class FolderDocumentRepository implements DocumentRepository {
  readonly description: string;
  private readonly dirs: readonly string[];
  constructor(
    private readonly layout: DocumentLayout,
    dir: string | readonly string[],
  ) {
    this.dirs = typeof dir === 'string' ? [dir] : dir;
    this.description = `folder ${this.dirs.join(', ')}`;
  }

  source(name: string, version: string): string {
    const files = this.dirs.map((d) => path.join(d, name, `${version}.json`));
    return files.find((f) => existsSync(f)) ?? files[0] ?? '';
  }

  async read(name: string, version: string): Promise<string> {
    const l = this.layout;
    if (!valid(l, name, version)) throw new AppError('not_found', `No such ${l.label} version.`);
    for (const dir of this.dirs) {
      const file = path.join(dir, name, `${version}.json`);
      const size = await stat(file).then(
        (s) => (s.isFile() ? s.size : undefined),
        () => undefined,
      );
      if (size === undefined) continue;
      if (size > l.maxBytes) throw tooLarge(l, size); // checked before the file is read
      const text = await readFile(file, 'utf8').catch(() => undefined);
      if (text === undefined) continue;
      if (Buffer.byteLength(text) > l.maxBytes) throw tooLarge(l, Buffer.byteLength(text));
      return text;
    }
    throw new AppError('not_found', `No ${l.label} ${name} ${version} in the ${l.label} folders.`);
  }

  async versions(name: string): Promise<string[]> {
    const l = this.layout;
    if (!l.nameRe.test(name)) return [];
    const all = new Set<string>();
    for (const dir of this.dirs) {
      const files = await readdir(path.join(dir, name)).catch(() => [] as string[]);
      for (const f of files) if (f.endsWith('.json') && l.versionRe.test(f.slice(0, -5))) all.add(f.slice(0, -5));
    }
    return [...all].sort(compareVersions);
  }
}

/** A blob container holding `{prefix}/{name}/{version}.json`. */
export class BlobDocumentRepository implements DocumentRepository {
  readonly description: string;
  constructor(
    private readonly layout: DocumentLayout,
    private readonly container: ContainerClient,
  ) {
    this.description = `blob container ${container.containerName}`;
  }

  source(name: string, version: string): string {
    return `${this.container.containerName}/${documentBlobName(this.layout, name, version)}`;
  }

  async read(name: string, version: string): Promise<string> {
    const l = this.layout;
    if (!valid(l, name, version)) throw new AppError('not_found', `No such ${l.label} version.`);
    const blob = this.container.getBlobClient(documentBlobName(l, name, version));
    try {
      const props = await blob.getProperties();
      const size = props.contentLength ?? 0;
      if (size > l.maxBytes) throw tooLarge(l, size);
      return (await blob.downloadToBuffer(0, size)).toString('utf8');
    } catch (err) {
      if (err instanceof AppError) throw err;
      if ((err as { statusCode?: unknown }).statusCode === 404)
        throw new AppError('not_found', `No ${l.label} ${name} ${version} in the container.`, { cause: err });
      throw new AppError('dependency_unavailable', `The ${l.label} container is unavailable.`, {
        cause: err,
        transient: true,
        retryAfterSec: 5,
      });
    }
  }

  async versions(name: string): Promise<string[]> {
    const out: string[] = [];
    for await (const b of this.container.listBlobsFlat({ prefix: `${this.layout.prefix}/${name}/` })) {
      const p = parseDocumentPath(this.layout, b.name);
      if (p?.name === name) out.push(p.version);
      if (out.length >= 1000) break;
    }
    return out.sort(compareVersions);
  }
}

/**
 * The repository of one whole-document kind: its container (`container`) of the storage account `storage` names, or,
 * without one, `folders` searched in order (on embedded defaults the models folder's `{prefix}/`, where uploads land
 * as in the container, then the shipped folder).
 * @throws AppError `config_invalid` for unusable storage settings.
 */
export function openDocumentRepository(
  layout: DocumentLayout,
  o: {
    readonly storage: BlobStorageSettings;
    readonly container: string;
    readonly folders: readonly string[];
    readonly credential?: TokenCredential | undefined;
  },
): DocumentRepository {
  if (!blobConfigured(o.storage)) return new FolderDocumentRepository(layout, o.folders);
  return new BlobDocumentRepository(layout, openContainer(o.storage, o.container, { credential: o.credential }).client);
}
