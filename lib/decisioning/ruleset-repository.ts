/**
 * Where ruleset documents are read from: `rulesets/{name}/{version}.json` in a blob container
 * (`RULESETS_CONTAINER`, default the models container), or the shipped `rulesets/` folder (`{name}/{version}.json`),
 * through the one document store of whole-document kinds (`lib/rollout/document-repository.ts`).
 */
import type { ContainerClient } from '@azure/storage-blob';
import { AppError } from '../errors/errors';
import {
  BlobDocumentRepository,
  documentBlobName,
  FolderDocumentRepository,
  parseDocumentPath,
  type DocumentLayout,
  type DocumentRepository,
} from '../rollout/document-repository';

/** Largest ruleset document accepted, bytes. */
export const MAX_RULESET_BYTES = 1024 * 1024;

/** Where ruleset documents are and how large they may be. */
export const RULESET_LAYOUT: DocumentLayout = {
  label: 'ruleset',
  prefix: 'rulesets',
  maxBytes: MAX_RULESET_BYTES,
  nameRe: /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/,
  versionRe: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
};

/** Parses a blob path `rulesets/{name}/{version}.json` (leading container segments are ignored). */
export function parseRulesetPath(blobPath: string): { name: string; version: string } | undefined {
  return parseDocumentPath(RULESET_LAYOUT, blobPath);
}

/** The blob name of a ruleset version. */
export const rulesetBlobName = (name: string, version: string): string =>
  documentBlobName(RULESET_LAYOUT, name, version);

/** Reads ruleset documents. */
export type RulesetRepository = DocumentRepository;

/**
 * Folders laid out as `{dir}/{name}/{version}.json`, searched in order: on embedded defaults the models folder's
 * `rulesets/` (where uploads land, as in the container) and then the shipped folder.
 */
export const folderRulesetRepository = (dir: string | readonly string[]): RulesetRepository =>
  new FolderDocumentRepository(RULESET_LAYOUT, dir);

/** A blob container holding `rulesets/{name}/{version}.json`. */
export const blobRulesetRepository = (container: ContainerClient): RulesetRepository =>
  new BlobDocumentRepository(RULESET_LAYOUT, container);

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
