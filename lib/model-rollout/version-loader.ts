/**
 * Loads a version the fleet pointer names, on one instance: reads the file from the models container (or
 * the app's bundled folder for the baseline), verifies its sha256 against the pointer, and validates it
 * (in a worker) before it may serve. A backend already validated on this instance by the upload handler is
 * handed over instead of loading the same version twice.
 */
import { AppError, toAppError } from '../errors/errors';
import type { InferenceBackend } from '../inference/backend';
import type { FleetState, VersionRecord } from './fleet-state';
import type { ModelRepository } from './model-repository';
import type { ModelValidator } from './model-validator';

/** Prepared backends kept for hand-over at most. */
const MAX_OFFERS = 2;

/** Dependencies of a {@link VersionLoader}. */
export interface VersionLoaderDeps {
  /** The models container (pointers with `source: 'repository'`). */
  readonly repository: ModelRepository;
  /** The app's bundled models folder (pointers with `source: 'bundled'`). */
  readonly bundled: ModelRepository;
  readonly validator: ModelValidator;
  /** `MODEL_MAX_BYTES`. */
  readonly maxBytes: number;
}

/** The golden set an instance validates a version with: the manifest's own, else the one kept for the name. */
export function goldenFor(
  rec: VersionRecord,
  state: FleetState | undefined,
): { inputs: readonly (readonly number[])[]; source: 'manifest' | 'kept' } | undefined {
  if (rec.manifest.golden !== undefined && rec.manifest.golden.inputs.length > 0)
    return { inputs: rec.manifest.golden.inputs, source: 'manifest' };
  return state?.golden === undefined ? undefined : { inputs: state.golden.inputs, source: 'kept' };
}

/** Loads, verifies and validates versions for one instance. */
export class VersionLoader {
  private readonly offers = new Map<string, InferenceBackend>();

  constructor(private readonly deps: VersionLoaderDeps) {}

  /** Hands over a backend validated on this instance (by the upload handler) for the next load of that version. */
  offer(version: string, sha256: string, backend: InferenceBackend): void {
    const key = `${version}:${sha256}`;
    void this.offers.get(key)?.dispose();
    this.offers.set(key, backend);
    while (this.offers.size > MAX_OFFERS) {
      const [oldest, b] = this.offers.entries().next().value as [string, InferenceBackend];
      this.offers.delete(oldest);
      void b.dispose();
    }
  }

  /** Disposes handed-over backends of versions other than `keep` (`version:sha256` keys). */
  discardOffersExcept(keep: readonly string[]): void {
    for (const [key, b] of this.offers) {
      if (keep.includes(key)) continue;
      this.offers.delete(key);
      void b.dispose();
    }
  }

  /**
   * A validated, warm backend for `rec` (the caller owns it).
   * @throws AppError: `not_found` (file missing), `model_invalid` (sha256 mismatch or failed validation), transient errors.
   */
  async load(rec: VersionRecord, state: FleetState | undefined): Promise<InferenceBackend> {
    const { pointer, manifest } = rec;
    const offered = this.offers.get(`${pointer.version}:${pointer.sha256}`);
    if (offered !== undefined) {
      this.offers.delete(`${pointer.version}:${pointer.sha256}`);
      return offered;
    }
    const repo = pointer.source === 'bundled' ? this.deps.bundled : this.deps.repository;
    const { bytes, sha256 } = await repo.readModel(
      { name: pointer.name, version: pointer.version },
      this.deps.maxBytes,
    );
    if (sha256 !== pointer.sha256) {
      throw new AppError(
        'model_invalid',
        `The file of ${pointer.name}@${pointer.version} does not match the pointer's sha256 (it changed after validation).`,
        { transient: false },
      );
    }
    try {
      const { backend } = await this.deps.validator.validate({
        manifest,
        bytes,
        sha256,
        golden: goldenFor(rec, state),
        forced: true,
      });
      return backend;
    } catch (err) {
      throw toAppError(err);
    }
  }

  /** Disposes handed-over backends nobody took. */
  async dispose(): Promise<void> {
    const all = [...this.offers.values()];
    this.offers.clear();
    await Promise.all(all.map((b) => b.dispose().catch(() => undefined)));
  }
}
