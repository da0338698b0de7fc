/**
 * The shipped model: what an instance serves when the fleet pointer names nothing. On embedded defaults the models
 * folder is also the models container, so uploads land beside the shipped files before they are validated: "the
 * newest file" may be an upload the pointer refused (or never saw). The folder therefore names its shipped versions
 * in `shipped.json` at its root (`{ "fraud": "1.0.0" }`: model name → version; no trigger path matches a file there);
 * only `MODEL_VERSION` (a pin) overrides it. A folder without that file, or without the name in it (an app package
 * whose models container is blob storage, where no upload lands), serves its newest version.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AppError } from '../errors/errors';
import { MODEL_VERSION_RE } from '../models/manifest';
import { ModelFolder, type FeatureSupport, type ModelArtifact, type ModelSource } from '../models/model-folder';

/** The marker's file name, at the root of the models folder. */
export const SHIPPED_FILE = 'shipped.json';

/**
 * The version `{dir}/shipped.json` names for model `name`; `undefined` when the file is absent or does not name it.
 * @throws AppError `config_invalid` when the file is unreadable, or names no valid version for `name`.
 */
export async function shippedVersion(dir: string, name: string): Promise<string | undefined> {
  const file = path.join(dir, SHIPPED_FILE);
  const text = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw new AppError('config_invalid', `${file} is unreadable.`, { cause: err });
  });
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = undefined;
  }
  const invalid = (): AppError =>
    new AppError('config_invalid', `${file} must map model names to versions, e.g. { "${name}": "1.0.0" }.`, {
      errors: [{ path: name, message: 'must be a semantic version like 1.0.0' }],
    });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid();
  const version = (raw as Record<string, unknown>)[name];
  if (version === undefined) return undefined;
  if (typeof version !== 'string' || !MODEL_VERSION_RE.test(version)) throw invalid();
  return version;
}

/**
 * A bundled folder's shipped version: its pinned version (`MODEL_VERSION`), else the one its `shipped.json` names,
 * else its newest. Any other source is used as it is.
 */
export class ShippedModelSource implements ModelSource {
  constructor(
    private readonly base: ModelSource,
    private readonly features: FeatureSupport,
  ) {}

  async load(): Promise<ModelArtifact> {
    const b = this.base;
    if (!(b instanceof ModelFolder) || b.version !== undefined) return b.load();
    const version = await shippedVersion(b.dir, b.name);
    return version === undefined ? b.load() : new ModelFolder(b.dir, b.name, version, this.features).load();
  }
}
