/**
 * The release bookkeeping of loaded model versions: each version is held by its owner (the session manager,
 * while it serves it) and by every lease on it; its backend's native memory is released when the last hold
 * ends, and releases under way are tracked so that shutting down can wait for them.
 */
import type { ModelManifest } from '../models/manifest';
import type { InferenceBackend } from './backend';

/** A refcounted hold on one loaded model version. Call `release()` exactly once when done. */
export interface Lease {
  readonly manifest: ModelManifest;
  readonly backend: InferenceBackend;
  release(): void;
}

/** One loaded version, as its owner holds it (see {@link VersionLeases.hold}). */
export interface HeldVersion {
  readonly manifest: ModelManifest;
  readonly backend: InferenceBackend;
  /** Takes a lease: one more hold, ended by the lease's `release()` (a second call does nothing). */
  lease(): Lease;
  /** Ends the owner's hold (call it once): the backend is released after the last lease ends. */
  drop(): void;
}

class Slot implements HeldVersion {
  private refs = 1; // the owner's own reference
  constructor(
    readonly manifest: ModelManifest,
    readonly backend: InferenceBackend,
    private readonly onFree: (slot: Slot) => void,
  ) {}

  lease(): Lease {
    this.refs++;
    let released = false;
    return {
      manifest: this.manifest,
      backend: this.backend,
      release: () => {
        if (released) return;
        released = true;
        this.drop();
      },
    };
  }

  drop(): void {
    if (--this.refs === 0) this.onFree(this);
  }
}

/** Hands out held versions, disposes each backend after its last hold, and tracks the disposals under way. */
export class VersionLeases {
  private readonly releasing = new Set<Promise<void>>();

  /** @param onReleased called once a version's backend is disposed (or its disposal failed). */
  constructor(private readonly onReleased: (manifest: ModelManifest) => void = () => undefined) {}

  /** Holds a loaded version for its owner; the owner's {@link HeldVersion.drop} ends that hold. */
  hold(manifest: ModelManifest, backend: InferenceBackend): HeldVersion {
    return new Slot(manifest, backend, (slot) => this.free(slot));
  }

  /** Settles when every release under way at the call has finished. */
  drained(): Promise<unknown> {
    return Promise.all([...this.releasing]);
  }

  private free(slot: Slot): void {
    const release: Promise<void> = slot.backend
      .dispose()
      .catch(() => undefined)
      .finally(() => {
        this.releasing.delete(release);
        this.onReleased(slot.manifest);
      });
    this.releasing.add(release);
  }
}
