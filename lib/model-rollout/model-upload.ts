/**
 * The model kind of the upload pipeline (`lib/rollout/upload-pipeline.ts`): what differs for models. Reads a blob
 * by reference (size from its properties, then capped and hashed while streaming), validates it (manifest uploaded
 * first or derived, in a worker, with the score shift against the active version) and publishes it to the fleet
 * pointer; the validated backend is offered to this instance's loader, so it swaps without loading it again.
 */
import { AppError } from '../errors/errors';
import type { InferenceBackend } from '../inference/backend';
import type { SessionManager } from '../inference/session-manager';
import { UploadRefused, type ArtifactBytes, type ArtifactKind, type Published } from '../rollout/upload-pipeline';
import { publishVersion, type FleetState, type ValidationSummary, type VersionRecord } from './fleet-state';
import type { FleetStore } from './fleet-store';
import { checkVersion, goldenOf, manifestOf, uploadMode } from './model-upload-checks';
import { parseModelBlobPath, type ModelRef } from './model-path';
import { modelTooLarge, type ModelRepository } from './model-repository';
import { ModelRejectedError, sha256Async, type ModelValidator } from './model-validator';
import type { VersionLoader } from './version-loader';

/** Dependencies of a {@link ModelKind}. */
export interface ModelKindDeps {
  /** The model name this app serves (`MODEL_NAME`). */
  readonly modelName: string;
  readonly container: string;
  readonly maxBytes: number;
  /** `MODEL_SHIFT_MAX`. */
  readonly shiftMax: number;
  /** `MODEL_FORCE_METADATA_KEY`. */
  readonly forceKey: string;
  readonly instanceId: string;
  readonly store: FleetStore;
  readonly repository: ModelRepository;
  readonly validator: ModelValidator;
  readonly loader: VersionLoader;
  readonly sessions: SessionManager;
  /**
   * `MODEL_DIRECT_ROLLOUT`: false (four-eyes) publishes every upload as a validated version only (`rollout:
   * candidate`), never as the active one: a second lead makes it serve. Default true.
   */
  readonly direct?: boolean;
}

/** A validated model, between validation and publication. */
export interface ValidatedModel {
  readonly rec: VersionRecord;
  readonly backend: InferenceBackend;
  readonly mode: 'active' | 'candidate';
  /** The version served before the first publication of the name (the rollback target). */
  readonly activeRec: VersionRecord | undefined;
  readonly golden: readonly (readonly number[])[] | undefined;
}

/** What a model publication adds to the outcome. */
export interface ModelPublished {
  readonly validation: ValidationSummary;
}

/** Models, as the upload pipeline sees them. */
export class ModelKind implements ArtifactKind<ValidatedModel, ModelPublished> {
  readonly kind = 'model';
  constructor(private readonly deps: ModelKindDeps) {}

  get name(): string {
    return this.deps.modelName;
  }
  get maxBytes(): number {
    return this.deps.maxBytes;
  }
  readonly tooLarge = (ref: ModelRef, size: number): AppError => modelTooLarge(ref, size, this.deps.maxBytes);

  parsePath(blobPath: string): ModelRef {
    let ref: ModelRef;
    try {
      ref = parseModelBlobPath(blobPath, this.deps.container);
    } catch (err) {
      throw new UploadRefused('blobPath', err);
    }
    const served = this.deps.modelName;
    if (ref.name !== served)
      throw new UploadRefused(
        'name',
        new AppError('model_invalid', `This app serves model "${served}", not "${ref.name}".`, {
          transient: false,
          errors: [{ path: 'name', message: `must be ${served}` }],
        }),
      );
    return ref;
  }

  async read(ref: ModelRef, blobPath: string): Promise<ArtifactBytes> {
    const { repository, maxBytes } = this.deps;
    // by reference: the size comes from the blob's properties, before a byte of it is read
    const props = await repository.properties(ref);
    if (props === undefined)
      throw new UploadRefused(
        'blobPath',
        new AppError('not_found', `${blobPath} is no longer in the container.`, { transient: false }),
      );
    if (props.size > maxBytes) throw new UploadRefused('size', modelTooLarge(ref, props.size, maxBytes));
    try {
      const { bytes, sha256 } = await repository.readModel(ref, maxBytes); // capped, hashed while streaming
      return { bytes, sha256, metadata: props.metadata };
    } catch (err) {
      if (err instanceof AppError && !err.transient)
        throw new UploadRefused(err.code === 'not_found' ? 'blobPath' : 'size', err);
      throw err;
    }
  }

  async validate(ref: ModelRef, content: ArtifactBytes, at: string): Promise<ValidatedModel | 'unchanged'> {
    const d = this.deps;
    const { bytes } = content;
    const sha256 = content.sha256 ?? (await sha256Async(bytes));
    const asked = uploadMode(content.metadata, d.forceKey);
    const { forced } = asked;
    const mode = d.direct === false ? 'candidate' : asked.mode;
    await d.sessions.ensureReady().catch(() => undefined); // the active version is the baseline and the shift reference
    const state = await d.store.read(ref.name);
    const activeRec = this.activeRecord(state, at);
    if (checkVersion(state, activeRec, ref, sha256) === 'unchanged') return 'unchanged';
    let text: string | undefined;
    try {
      text = await d.repository.readManifest(ref); // at most MANIFEST_MAX_BYTES
    } catch (err) {
      if (err instanceof AppError && !err.transient) throw new UploadRefused('manifest', err);
      throw err;
    }
    const manifest = manifestOf(text, activeRec, ref, sha256, at);
    const golden = goldenOf(manifest, state, activeRec);
    let lease;
    try {
      lease = d.sessions.acquire();
    } catch {
      lease = undefined; // nothing serving here: no shift to measure
    }
    let result;
    try {
      result = await d.validator.validate({
        manifest,
        bytes,
        sha256,
        golden,
        ...(lease === undefined ? {} : { compareWith: lease }),
        shiftMax: d.shiftMax,
        forced,
        forceKey: d.forceKey,
      });
    } catch (err) {
      if (err instanceof ModelRejectedError) throw new UploadRefused(err.check, err);
      if (err instanceof AppError && !err.transient) throw new UploadRefused('load', err);
      throw err;
    } finally {
      lease?.release();
    }
    const pointer = {
      name: ref.name,
      version: ref.version,
      blobPath: `${d.container}/${ref.name}/${ref.version}.onnx`,
      sha256,
      source: 'repository' as const,
      publishedBy: d.instanceId,
      publishedAt: at,
    };
    return {
      rec: { pointer, manifest, validation: result.summary },
      backend: result.backend,
      mode,
      activeRec,
      golden: golden?.source === 'manifest' ? golden.inputs : undefined,
    };
  }

  async publish(ref: ModelRef, v: ValidatedModel, at: string): Promise<Published & ModelPublished> {
    const d = this.deps;
    let generation: number;
    try {
      const t = await d.store.update(ref.name, (cur) =>
        publishVersion(cur, v.rec, {
          mode: v.mode,
          by: d.instanceId,
          at,
          ...(v.activeRec === undefined || cur !== undefined ? {} : { baseline: v.activeRec }),
          ...(v.golden === undefined ? {} : { golden: v.golden }),
        }),
      );
      generation = t.state.generation;
    } catch (err) {
      await v.backend.dispose().catch(() => undefined);
      if (err instanceof AppError && !err.transient) throw new UploadRefused('version', err);
      throw err;
    }
    if (v.mode === 'active')
      d.loader.offer(ref.version, v.rec.pointer.sha256, v.backend); // this instance swaps without loading it again
    else await v.backend.dispose();
    return { generation, mode: v.mode, validation: v.rec.validation as ValidationSummary };
  }

  /** The active version's record: from the pointer, else the version this instance serves (the bundled baseline). */
  private activeRecord(state: FleetState | undefined, at: string): VersionRecord | undefined {
    if (state !== undefined) return state.versions[state.active.version];
    const m = this.deps.sessions.manifest;
    if (m === undefined) return undefined;
    return {
      pointer: {
        name: m.name,
        version: m.version,
        blobPath: `bundled:${m.name}/${m.version}`,
        sha256: m.sha256,
        source: 'bundled',
        publishedBy: this.deps.instanceId,
        publishedAt: at,
      },
      manifest: m,
    };
  }
}
