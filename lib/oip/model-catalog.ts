/**
 * The models the Open Inference Protocol endpoints serve: the rollout's model (the versions this instance serves:
 * the active one and a loaded canary or shadow candidate) and, optionally, models loaded as they are
 * ({@link StaticCatalog}).
 */
import { AppError } from '../errors/errors';
import type { BackendFactory, InferenceBackend } from '../inference/backend';
import type { SessionManager } from '../inference/session-manager';
import { compareVersions } from '../models/model-folder';
import type { FleetStore } from '../model-rollout/fleet-store';
import { readOnnxSignature } from '../inference/onnx-signature';
import type { TrafficRouter } from '../model-rollout/traffic-router';
import type { ModelView } from './infer-request';
import { viewOfManifest } from './model-view';

/** A hold on one loaded version; call `release()` once. */
export interface ServedModel {
  readonly name: string;
  readonly version: string;
  readonly backend: InferenceBackend;
  release(): void;
}

/** A set of models by name. */
export interface ModelCatalog {
  /** Whether this catalog holds `name`. */
  has(name: string): boolean;
  /** Model names (for error messages). */
  readonly names: readonly string[];
  /** Versions of `name` this instance serves (each answers ready and infer here), ascending. */
  versions(name: string): Promise<readonly string[]>;
  /**
   * A loaded version: exactly `version`, or the active one when `undefined`.
   * @throws AppError `not_found` (unknown version), `conflict` (known, not loaded on this instance), `model_not_ready`.
   */
  acquire(name: string, version: string | undefined): Promise<ServedModel>;
  /** What a known version declares, when it is not loaded here (metadata); `undefined` if unknown. */
  declared(name: string, version: string): Promise<ModelView | undefined>;
}

const unknownVersion = (name: string, version: string): AppError =>
  new AppError('not_found', `Model "${name}" has no version "${version}".`);

/** Dependencies of a {@link RolloutCatalog}. */
export interface RolloutCatalogDeps {
  readonly name: string;
  /** The active version's manager. */
  readonly sessions: SessionManager;
  readonly router: TrafficRouter;
  readonly store: FleetStore;
}

/**
 * The rollout's model: lists and runs the versions this instance serves (the active version and the loaded
 * candidate), never another validated version of the pointer (it would answer 409 here); such a version is still
 * described from its manifest when named.
 */
export class RolloutCatalog implements ModelCatalog {
  constructor(private readonly deps: RolloutCatalogDeps) {}

  get names(): readonly string[] {
    return [this.deps.name];
  }

  has(name: string): boolean {
    return name === this.deps.name;
  }

  versions(): Promise<readonly string[]> {
    const all = new Set<string>();
    const active = this.deps.sessions.manifest?.version;
    const candidate = this.deps.router.candidateVersion;
    if (active !== undefined) all.add(active);
    if (candidate !== undefined) all.add(candidate);
    return Promise.resolve([...all].sort(compareVersions));
  }

  /** Whether `version` is validated (in the pointer) without being served here. */
  private async validated(version: string): Promise<boolean> {
    const state = await this.deps.store.read(this.deps.name).catch(() => undefined);
    return state?.versions[version] !== undefined;
  }

  async acquire(name: string, version: string | undefined): Promise<ServedModel> {
    await this.deps.sessions.ensureReady();
    const lease = version === undefined ? this.deps.sessions.acquire() : this.deps.router.acquireVersion(version);
    if (lease !== undefined)
      return { name, version: lease.manifest.version, backend: lease.backend, release: () => lease.release() };
    const v = version as string;
    if (!(await this.validated(v)) && !(await this.versions()).includes(v)) throw unknownVersion(name, v);
    throw new AppError(
      'conflict',
      `Version "${v}" of model "${name}" is validated but not loaded on this instance (it runs the active version and a canary or shadow candidate only).`,
    );
  }

  async declared(name: string, version: string): Promise<ModelView | undefined> {
    const state = await this.deps.store.read(name).catch(() => undefined);
    const rec = state?.versions[version];
    return rec === undefined ? undefined : viewOfManifest(rec.manifest);
  }
}

/** A model loaded as it is, with one version (no manifest, no fraud-specific validation). */
export interface StaticModel {
  readonly name: string;
  readonly version: string;
  readonly bytes: Uint8Array;
}

/** Models loaded once through the backend factory (micro-batcher included) and served until disposed. */
export class StaticCatalog implements ModelCatalog {
  private constructor(private readonly models: ReadonlyMap<string, { version: string; backend: InferenceBackend }>) {}

  /**
   * Loads every model. @throws AppError `model_invalid` if one cannot be read or loaded (those loaded are disposed).
   */
  static async create(models: readonly StaticModel[], factory: BackendFactory): Promise<StaticCatalog> {
    const loaded = new Map<string, { version: string; backend: InferenceBackend }>();
    try {
      for (const m of models) {
        const sig = readOnnxSignature(m.bytes);
        const input = sig.inputs[0];
        const output = sig.outputs[0];
        const backend = await factory.load({
          bytes: m.bytes,
          inputName: input?.name ?? '',
          outputName: output?.name ?? '',
          inputWidth: typeof input?.dims?.at(-1) === 'number' ? (input.dims.at(-1) as number) : 0,
        });
        loaded.set(m.name, { version: m.version, backend });
      }
    } catch (err) {
      await Promise.all([...loaded.values()].map((l) => l.backend.dispose()));
      throw err;
    }
    return new StaticCatalog(loaded);
  }

  get names(): readonly string[] {
    return [...this.models.keys()];
  }

  has(name: string): boolean {
    return this.models.has(name);
  }

  versions(name: string): Promise<readonly string[]> {
    const m = this.models.get(name);
    return Promise.resolve(m === undefined ? [] : [m.version]);
  }

  acquire(name: string, version: string | undefined): Promise<ServedModel> {
    const m = this.models.get(name);
    if (m === undefined) return Promise.reject(new AppError('not_found', `Unknown model "${name}".`));
    if (version !== undefined && version !== m.version) return Promise.reject(unknownVersion(name, version));
    return Promise.resolve({ name, version: m.version, backend: m.backend, release: () => undefined });
  }

  declared(): Promise<ModelView | undefined> {
    return Promise.resolve(undefined);
  }

  /** Disposes every model's backend (queued requests are refused, running ones finish). */
  async dispose(): Promise<void> {
    await Promise.all([...this.models.values()].map((m) => m.backend.dispose()));
  }
}
