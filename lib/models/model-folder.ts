import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AppError } from '../errors/errors';
import { manifestSchema, MODEL_NAME_RE, MODEL_VERSION_RE, type ModelManifest } from './manifest';

/** A model file and its manifest, read and verified. */
export interface ModelArtifact {
  readonly manifest: ModelManifest;
  readonly bytes: Uint8Array;
}

/** Where the session manager gets model artifacts from. */
export interface ModelSource {
  /** Loads the version to serve (the configured one, or the newest). */
  load(): Promise<ModelArtifact>;
}

/** Compares two `MAJOR.MINOR.PATCH` versions: negative if a < b. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Lower-case hex sha256 of bytes. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A problem found in a manifest: the field and what is wrong with it. */
export interface ManifestProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * Which of a manifest's input features cannot be computed: by the signals version the manifest names
 * (`manifest.signals`, else the shipped one). Empty when every feature can be.
 */
export type FeatureCheck = (manifest: ModelManifest) => Promise<readonly ManifestProblem[]>;

/**
 * What a manifest's features are checked against: a {@link FeatureCheck}, or a fixed list (the features must be
 * exactly these, in this order: a model without signals, as in tests).
 */
export type FeatureSupport = readonly string[] | FeatureCheck;

/** The problems of `manifest`'s feature list against `support` (none: every feature can be computed). */
export async function featureProblems(
  manifest: ModelManifest,
  support: FeatureSupport,
): Promise<readonly ManifestProblem[]> {
  if (typeof support === 'function') return support(manifest);
  const names = manifest.features.map((f) => f.name);
  return names.length === support.length && names.every((n, i) => n === support[i])
    ? []
    : [{ path: 'features', message: "do not match the featurizer's feature list" }];
}

/**
 * Checks an artifact's manifest against its bytes: sha256, input width (one column per feature), explanation.
 * @param sha256 the bytes' sha256 if already computed (hashing a large model blocks the event loop); default: computed here.
 * @param extra problems found beside (its features, {@link featureProblems}), reported with these.
 * @throws AppError `model_invalid` listing every mismatch.
 */
export function verifyArtifact(
  manifest: ModelManifest,
  bytes: Uint8Array,
  sha256?: string,
  extra: readonly ManifestProblem[] = [],
): void {
  const problems: ManifestProblem[] = [];
  if ((sha256 ?? sha256Hex(bytes)) !== manifest.sha256)
    problems.push({ path: 'sha256', message: 'does not match the model file' });
  problems.push(...extra);
  const count = manifest.features.length;
  const width = manifest.input.shape[manifest.input.shape.length - 1];
  if (width !== count)
    problems.push({ path: 'input.shape', message: `last dimension must be ${count} (one per feature)` });
  if (manifest.explanation !== undefined) {
    const { coefficients, baseline } = manifest.explanation;
    if (coefficients.length !== count || baseline.length !== count) {
      problems.push({ path: 'explanation', message: 'must have one coefficient and one baseline per feature' });
    }
  }
  if (problems.length > 0) {
    throw new AppError('model_invalid', `Model ${manifest.name}@${manifest.version} failed verification.`, {
      errors: problems,
      transient: false,
    });
  }
}

/** Parses manifest JSON text. @throws AppError `model_invalid` naming every bad field. */
export function parseManifest(text: string): ModelManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new AppError('model_invalid', 'The manifest is not valid JSON.', { transient: false });
  }
  const r = manifestSchema.safeParse(raw);
  if (!r.success) {
    throw new AppError('model_invalid', 'The manifest is invalid.', {
      transient: false,
      errors: r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    });
  }
  return r.data;
}

/**
 * Reads models from a folder laid out as `{dir}/{name}/{version}.onnx` + `{version}.json`
 * (the bundled `models/` folder locally; the same layout as the blob container).
 */
export class ModelFolder implements ModelSource {
  /**
   * @param dir the models folder.
   * @param name model name, e.g. `fraud`.
   * @param version version to serve; default the newest one present.
   * @param features what a manifest's features are verified against (the signals, or a fixed list).
   */
  constructor(
    readonly dir: string,
    readonly name: string,
    readonly version: string | undefined,
    private readonly features: FeatureSupport,
  ) {
    if (!MODEL_NAME_RE.test(name)) throw new AppError('config_invalid', `Invalid model name.`);
  }

  /** Versions present in the folder, oldest first. */
  async versions(): Promise<string[]> {
    let entries: string[];
    try {
      entries = await fs.readdir(path.join(this.dir, this.name));
    } catch {
      return [];
    }
    return entries
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -'.json'.length))
      .filter((v) => MODEL_VERSION_RE.test(v))
      .sort(compareVersions);
  }

  async load(): Promise<ModelArtifact> {
    const version = this.version ?? (await this.versions()).at(-1);
    if (version === undefined) {
      throw new AppError('model_not_ready', `No model "${this.name}" in the models folder.`, { transient: true });
    }
    return this.loadVersion(version);
  }

  /** Reads and verifies one version. */
  async loadVersion(version: string): Promise<ModelArtifact> {
    if (!MODEL_VERSION_RE.test(version))
      throw new AppError('model_invalid', 'Invalid model version.', { transient: false });
    const base = path.join(this.dir, this.name, version);
    let text: string;
    let bytes: Uint8Array;
    try {
      text = await fs.readFile(`${base}.json`, 'utf8');
      bytes = await fs.readFile(`${base}.onnx`);
    } catch (err) {
      throw new AppError('model_not_ready', `Model ${this.name}@${version} is missing from the models folder.`, {
        cause: err,
        transient: true,
      });
    }
    const manifest = parseManifest(text);
    verifyArtifact(manifest, bytes, undefined, await featureProblems(manifest, this.features));
    return { manifest, bytes };
  }
}
