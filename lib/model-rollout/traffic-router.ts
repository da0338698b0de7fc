/**
 * Per-request routing between the active version and a candidate: a canary share of users (by a stable
 * hash of the userId, so a user always sees the same version) is served by the candidate; a shadow share
 * of requests is also scored by the candidate off the response path, for side-by-side distributions.
 */
import { inShare } from '../domain/traffic-share';
import type { SessionManager } from '../inference/session-manager';
import type { Lease } from '../inference/version-leases';
import type { ModelManifest } from '../models/manifest';
import type { TrafficSplit } from './fleet-state';
import type { ShadowRecorder } from './shadow-stats';

export { BUCKETS, inShare, routingBucket } from '../domain/traffic-share';

/** Dependencies of a {@link TrafficRouter}. */
export interface TrafficRouterDeps {
  /** The engine's session manager (the active version). */
  readonly active: SessionManager;
  /** A second manager holding the candidate version, if any. */
  readonly candidate: SessionManager;
  readonly recorder: ShadowRecorder;
  /** Most shadow runs in flight; more are skipped (counted as errors). Default 32. */
  readonly maxShadowInFlight?: number;
  /** Deadline of a shadow run, ms. Default 1000. */
  readonly shadowDeadlineMs?: number;
  /** Monotonic clock, ms (the backend's). Default `performance.now`. */
  readonly now?: () => number;
}

/** Routes requests between the active version and the candidate. */
export class TrafficRouter {
  private current: TrafficSplit | undefined;
  private inFlight = 0;
  private readonly now: () => number;

  constructor(private readonly deps: TrafficRouterDeps) {
    this.now = deps.now ?? (() => performance.now());
  }

  /** The split in force (undefined: all traffic on the active version). */
  get split(): TrafficSplit | undefined {
    return this.current;
  }

  /** Sets the split; the candidate manager must hold `split.candidate` for it to take effect. */
  setSplit(split: TrafficSplit | undefined): void {
    this.current = split;
  }

  /** The candidate version loaded, if any. */
  get candidateVersion(): string | undefined {
    return this.deps.candidate.manifest?.version;
  }

  /** The candidate's manifest, if one is loaded (what the signals rollout keeps its features for). */
  get candidateManifest(): ModelManifest | undefined {
    return this.deps.candidate.manifest;
  }

  /** The candidate's manager, when it holds the split's candidate version. */
  private candidate(): SessionManager | undefined {
    const s = this.current;
    const c = this.deps.candidate;
    return s !== undefined && c.isReady && c.manifest?.version === s.candidate ? c : undefined;
  }

  /**
   * Takes a lease for one request of `userId`: on the candidate for the canary share of users, else on the
   * active version. @throws AppError `model_not_ready` when nothing is loaded.
   */
  acquire(userId: string): Lease {
    const s = this.current;
    const c = s !== undefined && s.canaryPercent > 0 ? this.candidate() : undefined;
    if (c !== undefined && s !== undefined && inShare(userId, 'canary', s.canaryPercent)) {
      try {
        return c.acquire();
      } catch {
        /* withdrawn meanwhile: the active version serves */
      }
    }
    return this.deps.active.acquire();
  }

  /**
   * A lease on exactly `version` if this instance holds it (the active version or the loaded candidate),
   * whatever the split; `undefined` otherwise (the Open Inference Protocol's versioned endpoints).
   */
  acquireVersion(version: string): Lease | undefined {
    for (const m of [this.deps.active, this.deps.candidate]) {
      if (!m.isReady || m.manifest?.version !== version) continue;
      try {
        return m.acquire();
      } catch {
        /* withdrawn meanwhile */
      }
    }
    return undefined;
  }

  /**
   * For the shadow share of requests served by another version, scores the payment on the candidate too, off
   * the response path, with the candidate's own input row (`rowFor` its manifest: its feature list may differ);
   * the pair of scores goes to the shadow statistics. Never throws, never delays the caller.
   * @param key a per-request key (the transaction id).
   */
  shadow(
    key: string,
    rowFor: (manifest: ModelManifest) => Float32Array,
    served: { readonly version: string; readonly score: number },
  ): void {
    const s = this.current;
    if (s === undefined || s.shadowPercent <= 0 || !Number.isFinite(served.score)) return;
    const c = this.candidate();
    if (c === undefined || served.version === s.candidate || !inShare(key, 'shadow', s.shadowPercent)) return;
    const rec = this.deps.recorder;
    if (this.inFlight >= (this.deps.maxShadowInFlight ?? 32)) {
      rec.error(served.version, s.candidate);
      return;
    }
    let lease: Lease;
    try {
      lease = c.acquire();
    } catch {
      return;
    }
    let row: Float32Array;
    try {
      row = rowFor(lease.manifest);
    } catch {
      lease.release();
      rec.error(served.version, s.candidate);
      return;
    }
    this.inFlight++;
    const candidate = lease.manifest.version;
    void lease.backend
      .run(row, 1, { deadline: this.now() + (this.deps.shadowDeadlineMs ?? 1000) })
      .then(
        (r) => {
          const x = r.scores[0];
          if (x !== undefined && Number.isFinite(x)) rec.record(served.version, candidate, served.score, x);
          else rec.error(served.version, candidate);
        },
        () => rec.error(served.version, candidate),
      )
      .finally(() => {
        this.inFlight--;
        lease.release();
      });
  }
}
