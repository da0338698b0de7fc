/**
 * The per-instance side of the fleet pointer: listens for change announcements, reconciles periodically
 * (missed messages, instances started later), loads what the pointer names (single-flight: changes
 * arriving during a load coalesce into one more pass) and swaps it in atomically. An instance that cannot
 * load the pointer's version keeps serving its current one and reports itself stale.
 */
import { toAppError } from '../errors/errors';
import type { Timers } from '../platform/timers';
import type { ArtifactWait, FleetReadiness } from '../inference/readiness-views';
import type { SessionManager } from '../inference/session-manager';
import type { FleetState, VersionRecord } from './fleet-state';
import type { FleetStore } from './fleet-store';
import type { ShadowRecorder } from './shadow-stats';
import type { TrafficRouter } from './traffic-router';
import type { VersionLoader } from './version-loader';
import { PointerFollower } from '../rollout/pointer-follower';

/** A failure's message (our AppErrors' are safe to show; others are I/O errors without secrets). */
function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Events of a {@link FleetAgent} (logged by the composition root). */
export interface FleetAgentEvents {
  swapped(e: {
    name: string;
    from: string | undefined;
    to: string;
    generation: number;
    role: 'active' | 'candidate';
  }): void;
  stale(e: { name: string; desired: string; reason: string; role: 'active' | 'candidate' }): void;
  storeError(e: { stage: 'read' | 'report' | 'shadow' | 'subscribe'; message: string }): void;
}

/** Dependencies of a {@link FleetAgent}. */
export interface FleetAgentDeps {
  readonly name: string;
  readonly instanceId: string;
  readonly store: FleetStore;
  readonly loader: VersionLoader;
  /** The engine's session manager (active version). */
  readonly sessions: SessionManager;
  /** The candidate's session manager. */
  readonly candidates: SessionManager;
  readonly router: TrafficRouter;
  readonly recorder: ShadowRecorder;
  readonly timers: Timers;
  /** Reconcile period, ms (`MODEL_RECONCILE_INTERVAL_SEC` × 1000, default 30 000). */
  readonly intervalMs: number;
  /** Wall clock, epoch ms (instance reports). */
  readonly wallNow: () => number;
  readonly on?: Partial<FleetAgentEvents>;
}

/** Converges one instance on the fleet pointer of one model name. */
export class FleetAgent {
  private applied = 0;
  private stale: { desired: string; reason: string } | undefined;
  private candidateError: string | undefined;
  /** The pointer's active version at the last read (`null`: no pointer, the shipped version serves); unset before. */
  private desired: { version: string; sha256: string } | null | undefined;
  private disposed = false;
  private readonly follower: PointerFollower;

  constructor(private readonly deps: FleetAgentDeps) {
    this.follower = new PointerFollower(deps, () => this.pass(), {
      everyPeriod: () => this.flushShadow(),
      retry: { firstMs: 500, maxMs: 4000 }, // a pointer read that failed (a load that failed waits for the period)
      subscribeFailed: (message) => deps.on?.storeError?.({ stage: 'subscribe', message }),
    });
  }

  /** Subscribes and starts the reconcile loop (first pass right away). */
  start(): void {
    void this.follower.start();
  }

  /** This instance's fleet status. */
  readiness(): FleetReadiness {
    const c = this.deps.candidates.manifest?.version;
    return {
      instanceId: this.deps.instanceId,
      store: this.deps.store.description,
      generation: this.applied,
      stale: this.stale !== undefined,
      ...(this.stale === undefined ? {} : { desiredVersion: this.stale.desired, reason: this.stale.reason }),
      ...(c === undefined ? {} : { candidateVersion: c }),
      ...(this.candidateError === undefined ? {} : { candidateError: this.candidateError }),
    };
  }

  /** What readiness waits for: the pointer not read yet, or its active version not served (loading, or stale). */
  waiting(): ArtifactWait | undefined {
    const have = this.deps.sessions.manifest;
    const want = this.desired;
    if (want === null || (want !== undefined && have?.version === want.version && have.sha256 === want.sha256))
      return undefined;
    return {
      kind: 'model',
      name: this.deps.name,
      serving: have?.version ?? null,
      active: want?.version ?? null,
      reason:
        want === undefined
          ? 'the model pointer has not been read yet'
          : (this.stale?.reason ?? 'loading the active version'),
    };
  }

  /** Reconciles now; resolves when this instance has applied the pointer as read after the call (or failed to). */
  converge(): Promise<void> {
    return this.follower.converge();
  }

  /** Adds this instance's shadow counts to the fleet-wide ones (kept for the next tick if the store is down). */
  async flushShadow(): Promise<void> {
    const counts = this.deps.recorder.drain();
    for (const [i, c] of counts.entries()) {
      try {
        await this.deps.store.addShadow(this.deps.name, c);
      } catch (err) {
        this.deps.recorder.restore(counts.slice(i));
        this.deps.on?.storeError?.({ stage: 'shadow', message: toAppError(err).message });
        return;
      }
    }
  }

  /** One pass; `false` when the pointer could not be read (retried soon). */
  private async pass(): Promise<boolean> {
    const { sessions, store, name } = this.deps;
    // Until the first load (which already follows the pointer) is done, there is nothing to swap; the
    // composition root converges again when it completes.
    if (!sessions.isReady) return true;
    let state: FleetState | undefined;
    try {
      state = await store.read(name);
    } catch (err) {
      this.deps.on?.storeError?.({ stage: 'read', message: toAppError(err).message });
      return false;
    }
    this.desired = state === undefined ? null : { version: state.active.version, sha256: state.active.sha256 };
    // The store is the single source of truth (a read never returns an older generation, unless the
    // pointer was deleted and published anew): whatever it says now is what this instance follows.
    if (state === undefined) {
      this.applyTraffic(undefined);
      await this.report();
      return true;
    }
    await this.convergeActive(state);
    await this.convergeCandidate(state);
    this.deps.loader.discardOffersExcept(
      [state.active, ...(state.traffic === undefined ? [] : [state.versions[state.traffic.candidate]?.pointer])]
        .filter((p) => p !== undefined)
        .map((p) => `${p.version}:${p.sha256}`),
    );
    this.applied = state.generation;
    await this.report();
    return true;
  }

  private async convergeActive(state: FleetState): Promise<void> {
    const want = state.active;
    const have = this.deps.sessions.manifest;
    if (have?.version === want.version && have.sha256 === want.sha256) {
      this.stale = undefined;
      return;
    }
    const rec: VersionRecord | undefined = state.versions[want.version];
    try {
      if (rec === undefined) throw new Error(`no manifest is recorded for ${want.version}`);
      const backend = await this.deps.loader.load(rec, state);
      if (this.disposed) return void (await backend.dispose());
      this.deps.sessions.activate(rec.manifest, backend);
      this.stale = undefined;
      this.deps.on?.swapped?.({
        name: this.deps.name,
        from: have?.version,
        to: want.version,
        generation: state.generation,
        role: 'active',
      });
    } catch (err) {
      this.stale = { desired: want.version, reason: reasonOf(err) };
      this.deps.on?.stale?.({ name: this.deps.name, desired: want.version, reason: this.stale.reason, role: 'active' });
    }
  }

  private async convergeCandidate(state: FleetState): Promise<void> {
    const split = state.traffic;
    const rec = split === undefined ? undefined : state.versions[split.candidate];
    if (split === undefined || rec === undefined) {
      this.applyTraffic(undefined);
      return;
    }
    const have = this.deps.candidates.manifest;
    if (have?.version !== rec.pointer.version || have.sha256 !== rec.pointer.sha256) {
      this.deps.router.setSplit(undefined);
      try {
        const backend = await this.deps.loader.load(rec, state);
        if (this.disposed) return void (await backend.dispose());
        this.deps.candidates.activate(rec.manifest, backend);
        this.deps.on?.swapped?.({
          name: this.deps.name,
          from: have?.version,
          to: rec.pointer.version,
          generation: state.generation,
          role: 'candidate',
        });
      } catch (err) {
        this.candidateError = reasonOf(err);
        this.deps.on?.stale?.({
          name: this.deps.name,
          desired: rec.pointer.version,
          reason: this.candidateError,
          role: 'candidate',
        });
        if (this.deps.candidates.isReady) this.deps.candidates.retire();
        return;
      }
    }
    this.candidateError = undefined;
    this.deps.router.setSplit(split);
  }

  private applyTraffic(split: undefined): void {
    this.deps.router.setSplit(split);
    this.candidateError = undefined;
    if (this.deps.candidates.isReady) this.deps.candidates.retire();
  }

  private async report(): Promise<void> {
    try {
      await this.deps.store.reportInstance({
        instanceId: this.deps.instanceId,
        name: this.deps.name,
        activeVersion: this.deps.sessions.manifest?.version,
        candidateVersion: this.deps.router.split === undefined ? undefined : this.deps.candidates.manifest?.version,
        generation: this.applied,
        stale: this.stale !== undefined,
        ...(this.stale === undefined ? {} : { desiredVersion: this.stale.desired, staleReason: this.stale.reason }),
        reportedAtMs: this.deps.wallNow(),
      });
    } catch (err) {
      this.deps.on?.storeError?.({ stage: 'report', message: toAppError(err).message });
    }
  }

  /** Stops the loop and waits for a pass under way. */
  async dispose(): Promise<void> {
    this.disposed = true;
    await this.follower.dispose();
  }
}
