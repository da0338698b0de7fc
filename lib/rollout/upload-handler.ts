/**
 * What the blob trigger does with an uploaded model (on the one instance it fires on): check the name,
 * size and version, read the optional manifest uploaded first (else derive one from the active version's),
 * validate (in a worker, with the score shift against the active version), and publish the fleet pointer.
 * It never swaps only locally: every instance, this one included, follows the pointer. A rejected upload
 * leaves the pointer untouched; the reason is logged and kept for the admin API.
 */
import { AppError, toAppError } from '../errors/errors';
import type { SessionManager } from '../inference/session-manager';
import type { Logger } from '../telemetry/logger';
import type { ModelManifest } from '../models/manifest';
import { compareVersions, parseManifest } from '../models/model-folder';
import type { FleetAgent } from './fleet-agent';
import { publishVersion, type FleetState, type ValidationSummary, type VersionRecord } from './fleet-state';
import type { FleetStore, RejectCheck, Rejection } from './fleet-store';
import { parseModelBlobPath, type ModelRef } from './model-path';
import { tooLarge, type ModelRepository } from './model-repository';
import { ModelRejectedError, sha256Async, type ModelValidator } from './model-validator';
import type { VersionLoader } from './version-loader';

/**
 * An uploaded model, as the blob trigger delivers it: by reference (`bytes` absent: the handler checks
 * the blob's size from its properties, then reads it from the repository with a cap and hashes it while
 * streaming), or with the bytes the runtime already read.
 */
export interface ModelUpload {
  /** The trigger's `BlobTrigger`, e.g. `models/fraud/1.1.0.onnx`. */
  readonly blobPath: string;
  /** The blob's content, when the trigger delivered it; absent: read from the repository. */
  readonly bytes?: Uint8Array;
  /**
   * Blob metadata: `{force key}=true` accepts a large score shift; `rollout=candidate` publishes without
   * promoting. Absent: the blob's own metadata, from its properties.
   */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** What became of an upload. */
export type UploadOutcome =
  | {
      readonly kind: 'published';
      readonly name: string;
      readonly version: string;
      readonly mode: 'active' | 'candidate';
      readonly generation: number;
      readonly validation: ValidationSummary;
    }
  | { readonly kind: 'unchanged'; readonly name: string; readonly version: string }
  | { readonly kind: 'rejected'; readonly rejection: Rejection };

/** Dependencies of an {@link UploadHandler}. */
export interface UploadHandlerDeps {
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
  readonly agent: FleetAgent;
  /** Wall clock, epoch ms. */
  readonly wallNow: () => number;
  readonly logger: Logger;
}

const truthy = (v: unknown): boolean => typeof v === 'string' && ['true', '1', 'yes'].includes(v.trim().toLowerCase());

/** Metadata value by case-insensitive key (the runtime camel-cases trigger metadata keys). */
function meta(m: Readonly<Record<string, unknown>>, key: string): unknown {
  const k = Object.keys(m).find((x) => x.toLowerCase() === key.toLowerCase());
  return k === undefined ? undefined : m[k];
}

/** A manifest for an upload that came without one: the active version's, minus what is specific to it. */
export function deriveManifest(active: ModelManifest, ref: ModelRef, sha256: string, at: string): ModelManifest {
  const { golden: _g, explanation: _e, metrics: _m, training: _t, createdAt: _c, ...base } = active;
  return { ...base, name: ref.name, version: ref.version, file: `${ref.version}.onnx`, sha256, createdAt: at };
}

/** Validates uploads and publishes them to the fleet. */
export class UploadHandler {
  constructor(private readonly deps: UploadHandlerDeps) {}

  /**
   * Handles one upload. Rejections are outcomes, not errors (retrying would not help).
   * @throws transient AppErrors only (store or container unavailable): the trigger retries.
   */
  async handle(u: ModelUpload): Promise<UploadOutcome> {
    const d = this.deps;
    const at = new Date(d.wallNow()).toISOString();
    let ref: ModelRef = { name: d.modelName, version: '?' };
    const reject = (check: RejectCheck, err: unknown): Promise<UploadOutcome> =>
      this.reject(ref, u.blobPath, check, err, at);
    try {
      ref = parseModelBlobPath(u.blobPath, d.container);
    } catch (err) {
      return reject('blobPath', err);
    }
    if (ref.name !== d.modelName)
      return reject(
        'name',
        new AppError('model_invalid', `This app serves model "${d.modelName}", not "${ref.name}".`, {
          transient: false,
          errors: [{ path: 'name', message: `must be ${d.modelName}` }],
        }),
      );
    let metadata = u.metadata ?? {};
    if (u.bytes === undefined) {
      // by reference: the size comes from the blob's properties, before a byte of it is read
      const props = await d.repository.properties(ref);
      if (props === undefined)
        return reject(
          'blobPath',
          new AppError('not_found', `${u.blobPath} is no longer in the container.`, { transient: false }),
        );
      if (props.size > d.maxBytes) return reject('size', tooLarge(ref, props.size, d.maxBytes));
      metadata = u.metadata ?? props.metadata;
    } else if (u.bytes.length > d.maxBytes) return reject('size', tooLarge(ref, u.bytes.length, d.maxBytes));
    const forced = truthy(meta(metadata, d.forceKey));
    const mode = String(meta(metadata, 'rollout') ?? '').toLowerCase() === 'candidate' ? 'candidate' : 'active';

    let bytes: Uint8Array;
    let sha256: string;
    if (u.bytes === undefined) {
      try {
        ({ bytes, sha256 } = await d.repository.readModel(ref, d.maxBytes)); // capped, hashed while streaming
      } catch (err) {
        if (err instanceof AppError && !err.transient)
          return reject(err.code === 'not_found' ? 'blobPath' : 'size', err);
        throw err;
      }
    } else {
      bytes = u.bytes;
      sha256 = await sha256Async(bytes);
    }
    await d.sessions.ensureReady().catch(() => undefined); // the active version is the baseline and the shift reference
    const state = await d.store.read(ref.name);
    const known = state?.versions[ref.version];
    if (known !== undefined && known.pointer.sha256 === sha256)
      return { kind: 'unchanged', name: ref.name, version: ref.version };
    const activeRec = this.activeRecord(state, at);
    if (known !== undefined)
      return reject(
        'version',
        new AppError(
          'conflict',
          `Version ${ref.version} was already published with other content; versions are immutable: upload a new version.`,
          { transient: false },
        ),
      );
    if (activeRec !== undefined && compareVersions(ref.version, activeRec.pointer.version) <= 0) {
      return reject(
        'version',
        new AppError(
          'model_invalid',
          `Version ${ref.version} is not newer than the active version ${activeRec.pointer.version}.`,
          {
            transient: false,
            errors: [{ path: 'version', message: `must be newer than ${activeRec.pointer.version}` }],
          },
        ),
      );
    }

    let manifest: ModelManifest;
    let text: string | undefined;
    try {
      text = await d.repository.readManifest(ref); // at most MANIFEST_MAX_BYTES
    } catch (err) {
      if (err instanceof AppError && !err.transient) return reject('manifest', err);
      throw err;
    }
    if (text !== undefined) {
      try {
        manifest = parseManifest(text);
      } catch (err) {
        return reject('manifest', err);
      }
      if (manifest.name !== ref.name || manifest.version !== ref.version) {
        return reject(
          'manifest',
          new AppError(
            'model_invalid',
            `The manifest describes ${manifest.name}@${manifest.version}, not ${ref.name}@${ref.version}.`,
            { transient: false, errors: [{ path: 'version', message: 'must match the blob path' }] },
          ),
        );
      }
    } else if (activeRec !== undefined) {
      manifest = deriveManifest(activeRec.manifest, ref, sha256, at);
    } else {
      return reject(
        'manifest',
        new AppError('model_invalid', 'No manifest was uploaded and there is no active version to derive one from.', {
          transient: false,
        }),
      );
    }
    const golden =
      manifest.golden !== undefined && manifest.golden.inputs.length > 0
        ? { inputs: manifest.golden.inputs, source: 'manifest' as const }
        : (state?.golden ?? activeRec?.manifest.golden) !== undefined
          ? {
              inputs: (state?.golden?.inputs ?? activeRec?.manifest.golden?.inputs) as number[][],
              source: 'kept' as const,
            }
          : undefined;

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
      if (err instanceof ModelRejectedError) return reject(err.check, err);
      if (err instanceof AppError && !err.transient) return reject('load', err);
      throw err;
    } finally {
      lease?.release();
    }
    const { backend, summary } = result;
    const rec: VersionRecord = {
      pointer: {
        name: ref.name,
        version: ref.version,
        blobPath: `${d.container}/${ref.name}/${ref.version}.onnx`,
        sha256,
        source: 'repository',
        publishedBy: d.instanceId,
        publishedAt: at,
      },
      manifest,
      validation: summary,
    };
    let generation: number;
    try {
      const t = await d.store.update(ref.name, (cur) =>
        publishVersion(cur, rec, {
          mode,
          by: d.instanceId,
          at,
          ...(activeRec === undefined || cur !== undefined ? {} : { baseline: activeRec }),
          ...(golden?.source === 'manifest' ? { golden: golden.inputs } : {}),
        }),
      );
      generation = t.state.generation;
    } catch (err) {
      await backend.dispose().catch(() => undefined);
      if (err instanceof AppError && !err.transient) return reject('version', err);
      throw err;
    }
    if (mode === 'active')
      d.loader.offer(ref.version, sha256, backend); // this instance swaps without loading it again
    else await backend.dispose();
    void d.agent.converge();
    d.logger.info('model published', {
      model: ref.name,
      version: ref.version,
      mode,
      generation,
      forced,
      shift: summary.shift?.meanAbs,
      loadMs: summary.loadMs,
    });
    return { kind: 'published', name: ref.name, version: ref.version, mode, generation, validation: summary };
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

  private async reject(
    ref: ModelRef,
    blobPath: string,
    check: RejectCheck,
    err: unknown,
    at: string,
  ): Promise<UploadOutcome> {
    const e = toAppError(err);
    const rejection: Rejection = {
      name: ref.name,
      version: ref.version,
      blobPath: blobPath.slice(0, 256),
      check,
      code: e.code,
      reason: e.message,
      errors: e.errors,
      by: this.deps.instanceId,
      at,
    };
    this.deps.logger.warn('model rejected', {
      model: ref.name,
      version: ref.version,
      check,
      code: e.code,
      reason: e.message,
    });
    await this.deps.store
      .recordRejection(rejection)
      .catch((x: unknown) =>
        this.deps.logger.error('could not record a model rejection', { reason: toAppError(x).message }),
      );
    return { kind: 'rejected', rejection };
  }
}
