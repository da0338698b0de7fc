/**
 * The model kind's checks of an upload before validation, pure: the blob's metadata (force key, rollout mode), the
 * version against what the pointer holds, the manifest (uploaded, or derived from the active version's) and the
 * golden rows it is checked with.
 */
import { AppError } from '../errors/errors';
import type { ModelManifest } from '../models/manifest';
import { parseManifest } from '../models/model-folder';
import { UploadRefused } from '../rollout/upload-pipeline';
import { MODEL_RULES, type FleetState, type VersionRecord } from './fleet-state';
import type { ModelRef } from './model-path';

const truthy = (v: unknown): boolean => typeof v === 'string' && ['true', '1', 'yes'].includes(v.trim().toLowerCase());

/** Metadata value by case-insensitive key (the runtime camel-cases trigger metadata keys). */
function meta(m: Readonly<Record<string, unknown>>, key: string): unknown {
  const k = Object.keys(m).find((x) => x.toLowerCase() === key.toLowerCase());
  return k === undefined ? undefined : m[k];
}

/** What the blob's metadata asks: `{force key}=true` accepts a large score shift; `rollout=candidate` only publishes. */
export function uploadMode(
  metadata: Readonly<Record<string, unknown>>,
  forceKey: string,
): { forced: boolean; mode: 'active' | 'candidate' } {
  const forced = truthy(meta(metadata, forceKey));
  const mode = String(meta(metadata, 'rollout') ?? '').toLowerCase() === 'candidate' ? 'candidate' : 'active';
  return { forced, mode };
}

/** A manifest for an upload that came without one: the active version's, minus what is specific to it. */
export function deriveManifest(active: ModelManifest, ref: ModelRef, sha256: string, at: string): ModelManifest {
  const { golden: _g, explanation: _e, metrics: _m, training: _t, createdAt: _c, ...base } = active;
  return { ...base, name: ref.name, version: ref.version, file: `${ref.version}.onnx`, sha256, createdAt: at };
}

/**
 * Whether the version may be published: `unchanged` when this content is already published.
 * @throws UploadRefused `version`: the same version with other content, or not newer than the active version.
 */
export function checkVersion(
  state: FleetState | undefined,
  activeRec: VersionRecord | undefined,
  ref: ModelRef,
  sha256: string,
): 'unchanged' | 'new' {
  const known = state?.versions[ref.version];
  if (known !== undefined && known.pointer.sha256 === sha256) return 'unchanged';
  if (known !== undefined)
    throw new UploadRefused(
      'version',
      new AppError(
        'conflict',
        `Version ${ref.version} was already published with other content; versions are immutable: upload a new version.`,
        { transient: false },
      ),
    );
  const notNewer = MODEL_RULES.notNewer(ref.version, activeRec?.pointer.version, 'model_invalid');
  if (notNewer !== undefined) throw new UploadRefused('version', notNewer);
  return 'new';
}

/**
 * The upload's manifest: the one uploaded beside it (`text`), else derived from the active version's.
 * @throws UploadRefused `manifest`.
 */
export function manifestOf(
  text: string | undefined,
  activeRec: VersionRecord | undefined,
  ref: ModelRef,
  sha256: string,
  at: string,
): ModelManifest {
  if (text === undefined) {
    if (activeRec !== undefined) return deriveManifest(activeRec.manifest, ref, sha256, at);
    throw new UploadRefused(
      'manifest',
      new AppError('model_invalid', 'No manifest was uploaded and there is no active version to derive one from.', {
        transient: false,
      }),
    );
  }
  let manifest: ModelManifest;
  try {
    manifest = parseManifest(text);
  } catch (err) {
    throw new UploadRefused('manifest', err);
  }
  if (manifest.name !== ref.name || manifest.version !== ref.version)
    throw new UploadRefused(
      'manifest',
      new AppError(
        'model_invalid',
        `The manifest describes ${manifest.name}@${manifest.version}, not ${ref.name}@${ref.version}.`,
        { transient: false, errors: [{ path: 'version', message: 'must match the blob path' }] },
      ),
    );
  return manifest;
}

/** The golden rows the upload is checked with: its manifest's, else the ones kept for the name, else none. */
export function goldenOf(
  manifest: ModelManifest,
  state: FleetState | undefined,
  activeRec: VersionRecord | undefined,
): { inputs: number[][]; source: 'manifest' | 'kept' } | undefined {
  if (manifest.golden !== undefined && manifest.golden.inputs.length > 0)
    return { inputs: manifest.golden.inputs, source: 'manifest' };
  const kept = state?.golden?.inputs ?? activeRec?.manifest.golden?.inputs;
  return kept === undefined ? undefined : { inputs: kept, source: 'kept' };
}
