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

/** Readiness as the engine holds it: the sessions' health plus this instance's place in the fleet. */
export type EngineReadiness = Health & { readonly fleet?: FleetReadiness };

/**
 * Readiness as the engine already knows it, without running anything: the sessions' last sample inference,
 * plus `fleet`'s readiness when there is a rollout. Starts loading if nothing is loaded yet.
 */
export function currentReadiness(sessions: SessionManager, fleet?: { readiness(): FleetReadiness }): EngineReadiness {
  if (!sessions.isReady) void sessions.ensureReady().catch(() => undefined);
  const r = sessions.health;
  return fleet === undefined ? r : { ...r, fleet: fleet.readiness() };
}

/** `GET /api/health/ready`: nothing beyond the status and the model served (no instance, no reasons). */
export interface PublicReadiness {
  readonly status: 'ready' | 'not_ready';
  /** The version loaded, `null` while none is. */
  readonly model: { readonly name: string; readonly version: string } | null;
}

/** `GET /api/models/health` (admin): the detailed view. */
export interface HealthDetail {
  readonly status: 'ready' | 'not_ready';
  readonly model: { readonly name: string; readonly version: string } | null;
  /** Execution providers the session really uses. */
  readonly executionProviders: readonly string[];
  /** Why the requested providers were not used, if they were not. */
  readonly fallbackReason: string | null;
  /** Why not ready (load error, failed sample inference). */
  readonly reason: string | null;
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
    status: r.ready ? 'ready' : 'not_ready',
    model: m === undefined ? null : { name: m.name, version: m.version },
  };
}

/** The detailed view of `r`; `probeIntervalSec` is `HEALTH_PROBE_INTERVAL_SEC`. */
export function healthDetail(r: EngineReadiness, probeIntervalSec: number): HealthDetail {
  return {
    status: r.ready ? 'ready' : 'not_ready',
    model: r.model ?? null,
    executionProviders: r.ready ? r.executionProviders : [],
    fallbackReason: (r.ready ? r.fallbackReason : undefined) ?? null,
    reason: r.ready ? null : r.reason,
    lastCheckAt: r.checkedAt === undefined ? null : new Date(r.checkedAt).toISOString(),
    probeIntervalSec,
    fleet: r.fleet ?? null,
  };
}
