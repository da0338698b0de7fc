/**
 * The model source of an instance's first load: the version the fleet pointer names (read from the models
 * container, sha256-verified), so an instance started after a rollout comes up on the right version at
 * once. Without a pointer, or if it cannot be read, the shipped version (never the folder's newest file: uploads
 * land there before they are validated); the reconcile loop then retries, and readiness waits until it converges.
 */
import type { ModelArtifact, ModelSource } from '../models/model-folder';
import { featureProblems, verifyArtifact, type FeatureSupport } from '../models/model-folder';
import type { Logger } from '../platform/logger';
import type { FleetStore } from './fleet-store';
import type { ModelRepository } from './model-repository';

/** Dependencies of a {@link FleetModelSource}. */
export interface FleetModelSourceDeps {
  readonly name: string;
  readonly store: FleetStore;
  readonly repository: ModelRepository;
  /** The app's bundled models folder, as a repository (pointers with `source: 'bundled'`). */
  readonly bundled: ModelRepository;
  /** The fallback: the shipped version (`MODEL_VERSION`, else the one the folder's `shipped.json` names). */
  readonly base: ModelSource;
  /** What a manifest's features are verified against. */
  readonly features: FeatureSupport;
  readonly maxBytes: number;
  readonly logger: Logger;
}

/** Loads the pointer's version, else the bundled model. */
export class FleetModelSource implements ModelSource {
  constructor(private readonly deps: FleetModelSourceDeps) {}

  async load(): Promise<ModelArtifact> {
    const d = this.deps;
    let state;
    try {
      state = await d.store.read(d.name);
    } catch (err) {
      d.logger.warn('fleet pointer unavailable at start; loading the bundled model (the reconcile loop retries)', {
        reason: (err as Error).message,
      });
      return d.base.load();
    }
    const rec = state?.versions[state.active.version];
    if (state === undefined || rec === undefined) return d.base.load();
    try {
      const { pointer, manifest } = rec;
      const repo = pointer.source === 'bundled' ? d.bundled : d.repository;
      const { bytes, sha256 } = await repo.readModel({ name: pointer.name, version: pointer.version }, d.maxBytes);
      if (sha256 !== pointer.sha256)
        throw new Error(`the file of ${pointer.version} does not match the pointer's sha256`);
      verifyArtifact(manifest, bytes, sha256, await featureProblems(manifest, d.features));
      return { manifest, bytes };
    } catch (err) {
      d.logger.warn(
        "could not load the fleet pointer's version at start; loading the bundled model (the reconcile loop retries)",
        { version: rec.pointer.version, reason: (err as Error).message },
      );
      return d.base.load();
    }
  }
}
