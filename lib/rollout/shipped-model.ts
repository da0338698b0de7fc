/**
 * The shipped model: what an instance serves when the fleet pointer names nothing. On embedded defaults the models
 * folder is also the models container, so uploads land beside the shipped files before they are validated: "the
 * newest file" may be an upload the pointer refused (or never saw). The folder therefore names its shipped version
 * in `{name}/shipped.json` (`{ "version": "1.0.0" }`); only `MODEL_VERSION` (a pin) overrides it. A folder without
 * that file (an app package whose models container is blob storage, where no upload lands) serves its newest version.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AppError } from '../errors/errors';
import { MODEL_VERSION_RE } from '../models/manifest';
import { ModelFolder, type ModelArtifact, type ModelSource } from '../models/model-folder';

/** The marker's file name, in `{dir}/{name}/`. */
export const SHIPPED_FILE = 'shipped.json';

/**
 * The version `{dir}/{name}/shipped.json` names; `undefined` when the file is absent.
 * @throws AppError `config_invalid` when the file is unreadable or names no valid version.
 */
export async function shippedVersion(dir: string, name: string): Promise<string | undefined> {
  const file = path.join(dir, name, SHIPPED_FILE);
  const text = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw new AppError('config_invalid', `${file} is unreadable.`, { cause: err });
  });
  if (text === undefined) return undefined;
  let version: unknown;
  try {
    version = (JSON.parse(text) as { version?: unknown }).version;
  } catch {
    version = undefined;
  }
  if (typeof version !== 'string' || !MODEL_VERSION_RE.test(version))
    throw new AppError('config_invalid', `${file} must be { "version": "MAJOR.MINOR.PATCH" }.`, {
      errors: [{ path: 'version', message: 'must be a semantic version like 1.0.0' }],
    });
  return version;
}

/**
 * A bundled folder's shipped version: its pinned version (`MODEL_VERSION`), else the one `shipped.json` names, else
 * its newest. Any other source is used as it is.
 */
export class ShippedModelSource implements ModelSource {
  constructor(
    private readonly base: ModelSource,
    private readonly featureNames: readonly string[],
  ) {}

  async load(): Promise<ModelArtifact> {
    const b = this.base;
    if (!(b instanceof ModelFolder) || b.version !== undefined) return b.load();
    const version = await shippedVersion(b.dir, b.name);
    return version === undefined ? b.load() : new ModelFolder(b.dir, b.name, version, this.featureNames).load();
  }
}
