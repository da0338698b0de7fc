/**
 * Where ruleset documents are read from: `rulesets/{name}/{version}.json` in a blob container
 * (`RULESETS_CONTAINER`, default the models container), or the shipped `rulesets/` folder (`{name}/{version}.json`).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { ContainerClient } from '@azure/storage-blob';
import { AppError } from '../errors/errors';
import { compareVersions } from '../models/model-folder';

/** Largest ruleset document accepted, bytes. */
export const MAX_RULESET_BYTES = 1024 * 1024;

const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
const VERSION = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Parses a blob path `rulesets/{name}/{version}.json` (leading container segments are ignored). */
export function parseRulesetPath(blobPath: string): { name: string; version: string } | undefined {
  const m = /(?:^|\/)rulesets\/([^/]+)\/([^/]+)\.json$/.exec(blobPath);
  if (m === null || !NAME.test(m[1] as string) || !VERSION.test(m[2] as string)) return undefined;
  return { name: m[1] as string, version: m[2] as string };
}

/** The blob name of a ruleset version. */
export const rulesetBlobName = (name: string, version: string): string => `rulesets/${name}/${version}.json`;

/** Reads ruleset documents. */
export interface RulesetRepository {
  readonly description: string;
  /** The document's text. @throws AppError `not_found`, `payload_too_large`, `dependency_unavailable`. */
  read(name: string, version: string): Promise<string>;
  /** The versions present, ascending. */
  versions(name: string): Promise<string[]>;
  /** Where a version's document lives (a file path or `container/blob`), as rejections name it. */
  source(name: string, version: string): string;
}

function tooLarge(): AppError {
  return new AppError('payload_too_large', `A ruleset is at most ${MAX_RULESET_BYTES} bytes.`);
}

/**
 * Folders laid out as `{dir}/{name}/{version}.json`, searched in order: on embedded defaults the models folder's
 * `rulesets/` (where uploads land, as in the container) and then the shipped folder. A version is read from the
 * first folder that has it; the versions are those of every folder.
 */
export class FolderRulesetRepository implements RulesetRepository {
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
    if (!NAME.test(name) || !VERSION.test(version)) throw new AppError('not_found', 'No such ruleset version.');
    for (const dir of this.dirs) {
      const text = await readFile(path.join(dir, name, `${version}.json`), 'utf8').catch(() => undefined);
      if (text === undefined) continue;
      if (Buffer.byteLength(text) > MAX_RULESET_BYTES) throw tooLarge();
      return text;
    }
    throw new AppError('not_found', `No ruleset ${name} ${version} in the rulesets folder.`);
  }

  async versions(name: string): Promise<string[]> {
    if (!NAME.test(name)) return [];
    const all = new Set<string>();
    for (const dir of this.dirs) {
      const files = await readdir(path.join(dir, name)).catch(() => [] as string[]);
      for (const f of files) if (f.endsWith('.json') && VERSION.test(f.slice(0, -5))) all.add(f.slice(0, -5));
    }
    return [...all].sort(compareVersions);
  }
}

/** A blob container holding `rulesets/{name}/{version}.json`. */
export class BlobRulesetRepository implements RulesetRepository {
  readonly description: string;
  constructor(private readonly container: ContainerClient) {
    this.description = `blob container ${container.containerName}`;
  }

  source(name: string, version: string): string {
    return `${this.container.containerName}/${rulesetBlobName(name, version)}`;
  }

  async read(name: string, version: string): Promise<string> {
    const blob = this.container.getBlobClient(rulesetBlobName(name, version));
    try {
      const props = await blob.getProperties();
      if ((props.contentLength ?? 0) > MAX_RULESET_BYTES) throw tooLarge();
      return (await blob.downloadToBuffer(0, props.contentLength ?? 0)).toString('utf8');
    } catch (err) {
      if (err instanceof AppError) throw err;
      if ((err as { statusCode?: unknown }).statusCode === 404)
        throw new AppError('not_found', `No ruleset ${name} ${version} in the container.`, { cause: err });
      throw new AppError('dependency_unavailable', 'The rulesets container is unavailable.', {
        cause: err,
        transient: true,
        retryAfterSec: 5,
      });
    }
  }

  async versions(name: string): Promise<string[]> {
    const out: string[] = [];
    for await (const b of this.container.listBlobsFlat({ prefix: `rulesets/${name}/` })) {
      const p = parseRulesetPath(b.name);
      if (p?.name === name) out.push(p.version);
      if (out.length >= 1000) break;
    }
    return out.sort(compareVersions);
  }
}

/**
 * A repository that also reads the documents of approved drafts (docs/governance.md) for versions that were not
 * uploaded: what the rollout promotes after a second lead approved a draft made in the console. Drafts are not
 * among {@link versions} (the newest shipped or uploaded version serves at start, never a draft).
 */
export class WithApprovedDrafts implements RulesetRepository {
  readonly description: string;
  constructor(
    private readonly base: RulesetRepository,
    private readonly approved: (name: string, version: string) => Promise<string | undefined>,
  ) {
    this.description = `${base.description}, approved drafts`;
  }

  source(name: string, version: string): string {
    return this.base.source(name, version);
  }

  async read(name: string, version: string): Promise<string> {
    try {
      return await this.base.read(name, version);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'not_found') throw err;
      const text = await this.approved(name, version);
      if (text === undefined) throw err;
      return text;
    }
  }

  versions(name: string): Promise<string[]> {
    return this.base.versions(name);
  }
}
