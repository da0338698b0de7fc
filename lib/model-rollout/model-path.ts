/**
 * Names of model blobs: `{container}/{name}/{version}.onnx` and its manifest `{name}/{version}.json`.
 * Parsing is strict: anything but the exact layout (path traversal, encoded or odd characters, upper
 * case, leading zeros in versions) is refused before a byte of the model is looked at.
 */
import { AppError } from '../errors/errors';
import { MODEL_NAME_RE, MODEL_VERSION_RE } from '../models/manifest';

/** A model name and version, both syntactically valid. */
export interface ModelRef {
  readonly name: string;
  readonly version: string;
}

const BLOB_RE = /^([a-z][a-z0-9-]{0,63})\/([0-9.]{5,20})\.onnx$/;

/**
 * Parses a blob path as the trigger reports it (`BlobTrigger`, e.g. `models/fraud/1.1.0.onnx`).
 * @param blobPath the path, with or without the leading `{container}/`.
 * @param container the models container name, e.g. `models`.
 * @throws AppError `model_invalid` (with `errors[0].path = "blobPath"`) for any other shape.
 */
export function parseModelBlobPath(blobPath: string, container: string): ModelRef {
  const bad = (message: string): AppError =>
    new AppError('model_invalid', `Rejected blob path: ${message}.`, {
      transient: false,
      errors: [{ path: 'blobPath', message }],
    });
  if (typeof blobPath !== 'string' || blobPath.length === 0 || blobPath.length > 256)
    throw bad('must be {name}/{version}.onnx, at most 256 characters');
  const rest = blobPath.startsWith(`${container}/`) ? blobPath.slice(container.length + 1) : blobPath;
  if (rest.includes('..') || rest.includes('\\') || rest.includes('%') || rest.startsWith('/'))
    throw bad('must not contain "..", "\\", "%" or a leading "/"');
  const m = BLOB_RE.exec(rest);
  if (m === null)
    throw bad('must be {name}/{version}.onnx with a lower-case name (a-z, 0-9, -) and a version MAJOR.MINOR.PATCH');
  const [, name, version] = m as unknown as [string, string, string];
  if (!MODEL_NAME_RE.test(name)) throw bad('invalid model name');
  if (!MODEL_VERSION_RE.test(version)) throw bad('the version must be MAJOR.MINOR.PATCH without leading zeros');
  return { name, version };
}

/** The model file's name inside the container: `{name}/{version}.onnx`. */
export function modelBlobName(ref: ModelRef): string {
  return `${ref.name}/${ref.version}.onnx`;
}

/** The manifest's name inside the container: `{name}/{version}.json`. */
export function manifestBlobName(ref: ModelRef): string {
  return `${ref.name}/${ref.version}.json`;
}
