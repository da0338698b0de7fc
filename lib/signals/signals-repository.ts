/**
 * Where signals documents are read from: `features/{name}/{version}.json` in a blob container (`SIGNALS_CONTAINER`,
 * default the models container), or folders laid out as `{name}/{version}.json` (on embedded defaults the models
 * folder's `features/`, where uploads land as in the container, then the shipped `signals/` folder), through the one
 * document store of whole-document kinds (`lib/rollout/document-repository.ts`). Every read is capped at
 * {@link MAX_SIGNALS_BYTES}.
 * @module
 */
import type { ContainerClient } from '@azure/storage-blob';
import {
  BlobDocumentRepository,
  documentBlobName,
  FolderDocumentRepository,
  parseDocumentPath,
  type DocumentLayout,
  type DocumentRepository,
} from '../rollout/document-repository';
import { MAX_SIGNALS_BYTES, SIGNALS_NAME_RE, SIGNALS_VERSION_RE } from './signals-document';

/** Where signals documents are and how large they may be. */
export const SIGNALS_LAYOUT: DocumentLayout = {
  label: 'signals document',
  prefix: 'features',
  maxBytes: MAX_SIGNALS_BYTES,
  nameRe: SIGNALS_NAME_RE,
  versionRe: SIGNALS_VERSION_RE,
};

/** Parses a blob path `features/{name}/{version}.json` (leading container segments are ignored). */
export function parseSignalsPath(blobPath: string): { name: string; version: string } | undefined {
  return parseDocumentPath(SIGNALS_LAYOUT, blobPath);
}

/** The blob name of a signals version. */
export const signalsBlobName = (name: string, version: string): string =>
  documentBlobName(SIGNALS_LAYOUT, name, version);

/** Reads signals documents. */
export type SignalsRepository = DocumentRepository;

/** Folders laid out as `{dir}/{name}/{version}.json`, searched in order. */
export const folderSignalsRepository = (dir: string | readonly string[]): SignalsRepository =>
  new FolderDocumentRepository(SIGNALS_LAYOUT, dir);

/** A blob container holding `features/{name}/{version}.json`. */
export const blobSignalsRepository = (container: ContainerClient): SignalsRepository =>
  new BlobDocumentRepository(SIGNALS_LAYOUT, container);
