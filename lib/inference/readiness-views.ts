/**
 * The two readiness views: the anonymous one (`GET /api/health/ready`: status and model, nothing else) and the
 * detailed one (`GET /api/models/health`, admin), both built from the readiness the engine already holds.
 */
import type { Health, SessionManager } from './session-manager';

/** What readiness reports about this instance's place in the fleet (the rollout's fleet agent fills it in). */
export interface FleetReadiness {
  readonly instanceId: string;
  readonly store: string;
  /** Generation of the pointer last applied (0: none yet). */
  readonly generation: number;
  /** True when this instance could not load the version the pointer names and serves an older one. */
  readonly stale: boolean;
  readonly desiredVersion?: string;
  readonly reason?: string;
  readonly candidateVersion?: string;
  readonly candidateError?: string;
}

/**
 * A versioned artifact (the model, the ruleset) that does not yet serve the version its pointer names: what
 * readiness waits for.
 */
export interface ArtifactWait {
  readonly kind: 'model' | 'ruleset' | 'signals';
  readonly name: string;
  /** The version this instance serves, `null` while none is. */
  readonly serving: string | null;
  /** The pointer's active version; `null` while the pointer has not been read. */
  readonly active: string | null;
  /** Why (the load error, or that it is loading; never payment data). */
  readonly reason: string;
}

/** Something that converges on a pointer: what it still waits for (`undefined`: it serves the pointer's version). */
export interface Converging {
  waiting(): ArtifactWait | undefined;
}

/**
 * Readiness as the engine holds it: the sessions' health (`ready`: the model answers a sample inference), this
 * instance's place in the fleet, and the artifacts that do not yet serve their pointer's active version.
 */
export type EngineReadiness = Health & {
  readonly fleet?: FleetReadiness;
  readonly waitingFor: readonly ArtifactWait[];
};

/**
 * Readiness as the engine already knows it, without running anything: the sessions' last sample inference,
 * plus `fleet`'s readiness when there is a rollout, plus what `converging` (the model and ruleset rollouts) still
 * wait for. Starts loading if nothing is loaded yet.
 */
export function currentReadiness(
  sessions: SessionManager,
  fleet?: { readiness(): FleetReadiness },
  converging: readonly (Converging | undefined)[] = [],
): EngineReadiness {
  if (!sessions.isReady) void sessions.ensureReady().catch(() => undefined);
  const r = sessions.health;
  const waitingFor = converging.map((c) => c?.waiting()).filter((w) => w !== undefined);
  return fleet === undefined ? { ...r, waitingFor } : { ...r, fleet: fleet.readiness(), waitingFor };
}

/** Whether the instance may take traffic: the model answers, and every artifact serves its pointer's version. */
export function isServingPointer(r: EngineReadiness): boolean {
  return r.ready && r.waitingFor.length === 0;
}

/**
 * `GET /api/health/ready` (anonymous): the status and the model served; while the model is ready but an artifact
 * does not yet serve its pointer's active version, `waitingFor` names it (kind, name, versions serving and active).
 * No instance and no reasons (load errors): those are the admin view's.
 */
export interface PublicReadiness {
  readonly status: 'ready' | 'not_ready';
  /** The version loaded, `null` while none is. */
  readonly model: { readonly name: string; readonly version: string } | null;
  readonly waitingFor?: readonly Omit<ArtifactWait, 'reason'>[];
}

/** `GET /api/models/health` (admin): the detailed view. */
export interface HealthDetail {
  readonly status: 'ready' | 'not_ready';
  readonly model: { readonly name: string; readonly version: string } | null;
  /** Execution providers the session really uses. */
  readonly executionProviders: readonly string[];
  /** Why the requested providers were not used, if they were not. */
  readonly fallbackReason: string | null;
  /** Why not ready (load error, failed sample inference, an artifact not yet on its pointer's version). */
  readonly reason: string | null;
  /** The artifacts that do not yet serve their pointer's active version. */
  readonly waitingFor: readonly ArtifactWait[];
  /** When the sample inference behind this state ran (ISO 8601), `null` before the first. */
  readonly lastCheckAt: string | null;
  /** `HEALTH_PROBE_INTERVAL_SEC`. */
  readonly probeIntervalSec: number;
  /** This instance's place in the model rollout. */
  readonly fleet: FleetReadiness | null;
}

/** The anonymous view of `r`. */
export function publicReadiness(r: EngineReadiness): PublicReadiness {
  const m = r.model;
  return {
    status: isServingPointer(r) ? 'ready' : 'not_ready',
    model: m === undefined ? null : { name: m.name, version: m.version },
    ...(r.ready && r.waitingFor.length > 0
      ? { waitingFor: r.waitingFor.map(({ kind, name, serving, active }) => ({ kind, name, serving, active })) }
      : {}),
  };
}

/** The detailed view of `r`; `probeIntervalSec` is `HEALTH_PROBE_INTERVAL_SEC`. */
export function healthDetail(r: EngineReadiness, probeIntervalSec: number): HealthDetail {
  return {
    status: isServingPointer(r) ? 'ready' : 'not_ready',
    model: r.model ?? null,
    executionProviders: r.ready ? r.executionProviders : [],
    fallbackReason: (r.ready ? r.fallbackReason : undefined) ?? null,
    reason: r.ready ? (r.waitingFor.length === 0 ? null : describeWaits(r.waitingFor)) : r.reason,
    waitingFor: r.waitingFor,
    lastCheckAt: r.checkedAt === undefined ? null : new Date(r.checkedAt).toISOString(),
    probeIntervalSec,
    fleet: r.fleet ?? null,
  };
}

/** One line naming every wait: `ruleset fraud-rules: serving 1.0.0, active 1.1.0 (reason)`. */
export function describeWaits(waits: readonly ArtifactWait[]): string {
  return waits
    .map((w) => `${w.kind} ${w.name}: serving ${w.serving ?? 'none'}, active ${w.active ?? 'unknown'} (${w.reason})`)
    .join('; ');
}
