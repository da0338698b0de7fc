/**
 * The checks of model validation that need no session ({@link ModelValidator} in `model-validator.ts` runs them in
 * order): the artifact's sha256, its manifest against the featurizer, its graph signature, the golden scores a
 * manifest records, and the score shift against the active version; with the error that names the failed check.
 */
import { createHash } from 'node:crypto';
import { AppError, toAppError, type ErrorCode, type FieldError } from '../errors/errors';
import type { InferenceBackend } from '../inference/backend';
import type { Lease } from '../inference/version-leases';
import type { ModelManifest } from '../models/manifest';
import { featureProblems, verifyArtifact, type FeatureSupport } from '../models/model-folder';
import type { ShiftReport } from './fleet-state';
import type { RejectCheck } from './fleet-store';
import { readOnnxSignature, signatureProblems } from '../inference/onnx-signature';

/** Largest |score − recorded golden score| accepted. */
export const GOLDEN_TOLERANCE = 1e-3;

/** A model refused by validation: which check, with a stable code (`model_invalid` or `model_shift_exceeded`). */
export class ModelRejectedError extends AppError {
  constructor(
    readonly check: RejectCheck,
    message: string,
    errors: readonly FieldError[] = [],
    code: ErrorCode = 'model_invalid',
    cause?: unknown,
  ) {
    super(code, message, { errors, transient: false, ...(cause === undefined ? {} : { cause }) });
  }
}

/** Lower-case hex sha256, hashed in 1 MiB slices that yield to the event loop (a 34 MB model would block it ~30 ms). */
export async function sha256Async(bytes: Uint8Array): Promise<string> {
  const hash = createHash('sha256');
  const slice = 1 << 20;
  for (let off = 0; off < bytes.length; off += slice) {
    hash.update(bytes.subarray(off, Math.min(bytes.length, off + slice)));
    if (off + slice < bytes.length) await new Promise<void>((r) => setImmediate(r));
  }
  return hash.digest('hex');
}

/** Batch sizes warmed up: powers of two up to the batcher's largest batch, and that size itself. */
export function warmupBatchSizes(maxBatch: number): number[] {
  const sizes: number[] = [];
  for (let b = 1; b < maxBatch; b *= 2) sizes.push(b);
  sizes.push(Math.max(1, maxBatch));
  return sizes;
}

/** Runs one check (in its `model.check.<check>` span). */
export type CheckStep = <T>(check: string, fn: () => T | Promise<T>) => Promise<T>;

/** One validation. */
export interface ValidationRequest {
  readonly manifest: ModelManifest;
  readonly bytes: Uint8Array;
  /** The bytes' sha256 ({@link sha256Async}). */
  readonly sha256: string;
  /** Reference inputs: the manifest's own, or the ones kept for the model name. */
  readonly golden:
    { readonly inputs: readonly (readonly number[])[]; readonly source: 'manifest' | 'kept' } | undefined;
  /** The active version, to measure the score shift against (the caller releases it). */
  readonly compareWith?: Lease;
  /** Largest accepted mean absolute shift; `undefined` = report only. */
  readonly shiftMax?: number;
  /** Upload forced with blob metadata: a shift beyond the bound is reported, not refused. */
  readonly forced: boolean;
  /** The blob metadata key that forces an upload (`MODEL_FORCE_METADATA_KEY`), named in the rejection. */
  readonly forceKey?: string;
}

/**
 * The checks before the model is loaded: sha256, the manifest's features (`features`), the graph signature, and
 * the golden rows' width. @throws ModelRejectedError naming the failed check.
 */
export async function checkArtifact(req: ValidationRequest, features: FeatureSupport, step: CheckStep): Promise<void> {
  const { manifest, bytes } = req;
  const golden = req.golden?.inputs ?? [];
  await step('sha256', () => {
    if (req.sha256 !== manifest.sha256)
      throw new ModelRejectedError('sha256', `The model's sha256 does not match its manifest.`, [
        { path: 'sha256', message: 'does not match the model file' },
      ]);
  });
  await step('features', async () => {
    try {
      verifyArtifact(manifest, bytes, req.sha256, await featureProblems(manifest, features));
    } catch (err) {
      const e = toAppError(err);
      throw new ModelRejectedError('features', e.message, e.errors);
    }
  });
  const width = manifest.features.length;
  await step('signature', () => {
    let sig;
    try {
      sig = readOnnxSignature(bytes);
    } catch (err) {
      const e = toAppError(err);
      throw new ModelRejectedError('signature', e.message, e.errors);
    }
    const problems = signatureProblems(sig, manifest, manifest.features.length);
    if (problems.length > 0)
      throw new ModelRejectedError(
        'signature',
        `The model's input/output signature does not match the manifest and the featurizer.`,
        problems,
      );
    if (golden.some((r) => r.length !== width))
      throw new ModelRejectedError('golden', `Every golden row must have ${width} values.`, [
        { path: 'golden.inputs', message: `rows must have ${width} values` },
      ]);
  });
}

/** Scores `count` rows cycling through `rows`. */
export async function scoreRows(
  backend: InferenceBackend,
  rows: readonly (readonly number[])[],
  count: number,
): Promise<Float32Array> {
  const width = backend.info.inputWidth;
  const input = new Float32Array(count * width);
  for (let i = 0; i < count; i++) input.set(rows[i % rows.length] as number[], i * width);
  return (await backend.run(input, count)).scores;
}

/** A manifest that records golden scores must reproduce them. */
export function checkRecorded(manifest: ModelManifest, req: ValidationRequest, scores: Float32Array): void {
  const recorded = manifest.golden?.scores;
  if (req.golden?.source !== 'manifest' || recorded === undefined || recorded.length !== scores.length) return;
  let worst = 0;
  scores.forEach((s, i) => (worst = Math.max(worst, Math.abs(s - (recorded[i] as number)))));
  if (worst > GOLDEN_TOLERANCE) {
    throw new ModelRejectedError(
      'golden',
      `The model does not reproduce the golden scores recorded in its manifest (largest difference ${worst.toFixed(6)} > ${GOLDEN_TOLERANCE}).`,
      [{ path: 'golden.scores', message: `differ from the model's scores by up to ${worst.toFixed(6)}` }],
    );
  }
}

/** Score shift against the active version over the golden rows; refused beyond the bound unless forced. */
export async function scoreShift(
  req: ValidationRequest,
  golden: readonly (readonly number[])[],
  scores: Float32Array,
): Promise<ShiftReport | undefined> {
  const active = req.compareWith;
  if (active === undefined) return undefined;
  // the active version reads its own feature list: its columns of the golden rows, by name (a feature the new
  // version does not take leaves nothing to compare: no shift figure)
  const index = active.manifest.features.map((f) => req.manifest.features.findIndex((g) => g.name === f.name));
  if (index.some((i) => i < 0)) return undefined;
  const same = index.length === req.manifest.features.length && index.every((i, j) => i === j);
  const rows = same ? golden : golden.map((r) => index.map((i) => r[i] ?? 0));
  const base = await scoreRows(active.backend, rows, rows.length);
  let sum = 0;
  let max = 0;
  scores.forEach((s, i) => {
    const d = Math.abs(s - (base[i] ?? 0));
    sum += d;
    max = Math.max(max, d);
  });
  const meanAbs = Math.round((sum / golden.length) * 1e6) / 1e6;
  const exceeded = req.shiftMax !== undefined && meanAbs > req.shiftMax;
  const report: ShiftReport = {
    against: active.manifest.version,
    meanAbs,
    maxAbs: Math.round(max * 1e6) / 1e6,
    rows: golden.length,
    ...(req.shiftMax === undefined ? {} : { bound: req.shiftMax }),
    exceeded,
  };
  if (exceeded && !req.forced) {
    throw new ModelRejectedError(
      'shift',
      `The mean score shift against ${report.against} over ${report.rows} golden rows is ${meanAbs}, above the bound ${req.shiftMax} (MODEL_SHIFT_MAX); upload again with blob metadata ${req.forceKey ?? 'force'}=true to accept it.`,
      [{ path: 'shift', message: `mean absolute shift ${meanAbs} > ${req.shiftMax}` }],
      'model_shift_exceeded',
    );
  }
  return report;
}
