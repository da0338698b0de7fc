/**
 * Where the fleet pointer lives and how changes are announced: Redis (key + pub/sub, shared by every
 * instance) or in-process when no Redis is configured (the embedded default; same contract, one instance).
 * Also keeps the last rejections, what each instance reports about itself, and shadow statistics.
 */
import type { JsonFileMap } from '../persistence/json-file-map';
import type { ErrorCode, FieldError } from '../errors/errors';
import type { FleetState, Transition } from './fleet-state';
import { addCounts, emptyCounts, MAX_SHADOW_PAIRS, type ShadowCounts } from './shadow-stats';

/** Rejections kept per model name. */
export const MAX_REJECTIONS = 20;
/** Compare-and-set attempts before an update gives up (`conflict`). */
export const MAX_CAS_ATTEMPTS = 8;

/** Which validation step refused a model. */
export type RejectCheck =
  | 'blobPath'
  | 'name'
  | 'size'
  | 'manifest'
  | 'sha256'
  | 'features'
  | 'signature'
  | 'load'
  | 'warmup'
  | 'golden'
  | 'shift'
  | 'version';

/** A refused upload, as the admin API shows it. */
export interface Rejection {
  readonly name: string;
  readonly version: string;
  readonly blobPath: string;
  readonly check: RejectCheck;
  readonly code: ErrorCode;
  readonly reason: string;
  readonly errors: readonly FieldError[];
  /** Instance that validated the upload. */
  readonly by: string;
  /** ISO 8601. */
  readonly at: string;
}

/** What one instance reports about itself (each reconcile and after each change). */
export interface InstanceReport {
  readonly instanceId: string;
  readonly name: string;
  readonly activeVersion: string | undefined;
  readonly candidateVersion: string | undefined;
  /** Generation of the pointer it last applied. */
  readonly generation: number;
  /** True when it could not load the version the pointer names and keeps serving its current one. */
  readonly stale: boolean;
  readonly desiredVersion?: string;
  readonly staleReason?: string;
  /** Epoch ms. */
  readonly reportedAtMs: number;
}

/** Called when a model's pointer changed (`generation` is the new one). */
export type ChangeListener = (name: string, generation: number) => void;

/** Persistence and announcement of fleet pointers. */
export interface FleetStore {
  /** How logs name it, e.g. `redis` or `in-process`. */
  readonly description: string;
  /** The current state of a model name, if any. @throws AppError `dependency_unavailable`. */
  read(name: string): Promise<FleetState | undefined>;
  /**
   * Applies a transition atomically (compare-and-set on `generation`, retried on races) and announces
   * the change. An unchanged result writes and announces nothing. Errors thrown by `fn` propagate.
   * @throws AppError `dependency_unavailable`, `conflict` (too many concurrent writers).
   */
  update(name: string, fn: (current: FleetState | undefined) => Transition): Promise<Transition>;
  /**
   * Listens for change announcements (idempotent). Resolves true once subscribed; false if not (yet):
   * e.g. Redis still connecting. Call again later (the reconcile loop does). A listener may be called with
   * `name = "*"`, `generation = -1` after a reconnect: announcements may have been missed, re-read.
   */
  subscribe(listener: ChangeListener): Promise<boolean>;
  recordRejection(r: Rejection): Promise<void>;
  /** Newest first, at most {@link MAX_REJECTIONS}. */
  rejections(name: string): Promise<Rejection[]>;
  reportInstance(r: InstanceReport): Promise<void>;
  /** Reports newer than `sinceMs` (epoch ms); older ones are pruned. */
  instances(name: string, sinceMs: number): Promise<InstanceReport[]>;
  /** Adds an instance's shadow counts to the fleet-wide ones. */
  addShadow(name: string, counts: ShadowCounts): Promise<void>;
  /** Fleet-wide shadow counts of a pair, if any. */
  shadow(name: string, activeVersion: string, candidateVersion: string): Promise<ShadowCounts | undefined>;
  dispose(): Promise<void>;
}

/** The in-process store (no Redis): one instance, same contract. Announcements are asynchronous, as pub/sub's are. */
export class MemoryFleetStore implements FleetStore {
  readonly description: string;
  private readonly states = new Map<string, string>();
  private readonly rejected = new Map<string, Rejection[]>();
  private readonly reports = new Map<string, Map<string, InstanceReport>>();
  private readonly shadows = new Map<string, ShadowCounts>();
  private readonly listeners = new Set<ChangeListener>();
  private disposed = false;

  /**
   * @param file where the pointers are kept across restarts (embedded defaults: `ROLLOUT_STATE_DIR`); default none,
   *   in memory only.
   */
  constructor(private readonly file?: JsonFileMap<FleetState>) {
    this.description = file === undefined ? 'in-process' : `in-process, kept in ${file.file}`;
    for (const [name, state] of file?.entries() ?? []) this.states.set(name, JSON.stringify(state));
  }

  read(name: string): Promise<FleetState | undefined> {
    const s = this.states.get(name);
    return Promise.resolve(s === undefined ? undefined : (JSON.parse(s) as FleetState));
  }

  update(name: string, fn: (current: FleetState | undefined) => Transition): Promise<Transition> {
    // read, apply and write in one synchronous step: no other update can interleave
    const raw = this.states.get(name);
    let t: Transition;
    try {
      t = fn(raw === undefined ? undefined : (JSON.parse(raw) as FleetState));
    } catch (err) {
      return Promise.reject(err);
    }
    if (t.changed) {
      this.states.set(name, JSON.stringify(t.state));
      this.file?.set(name, t.state);
      const generation = t.state.generation;
      for (const l of this.listeners) setImmediate(() => !this.disposed && l(name, generation));
    }
    return Promise.resolve(t);
  }

  subscribe(listener: ChangeListener): Promise<boolean> {
    this.listeners.add(listener);
    return Promise.resolve(true);
  }

  recordRejection(r: Rejection): Promise<void> {
    this.rejected.set(r.name, [r, ...(this.rejected.get(r.name) ?? [])].slice(0, MAX_REJECTIONS));
    return Promise.resolve();
  }

  rejections(name: string): Promise<Rejection[]> {
    return Promise.resolve([...(this.rejected.get(name) ?? [])]);
  }

  reportInstance(r: InstanceReport): Promise<void> {
    let m = this.reports.get(r.name);
    if (m === undefined) this.reports.set(r.name, (m = new Map()));
    m.set(r.instanceId, r);
    return Promise.resolve();
  }

  instances(name: string, sinceMs: number): Promise<InstanceReport[]> {
    const m = this.reports.get(name) ?? new Map<string, InstanceReport>();
    for (const [id, r] of m) if (r.reportedAtMs < sinceMs) m.delete(id);
    return Promise.resolve([...m.values()].sort((a, b) => a.instanceId.localeCompare(b.instanceId)));
  }

  addShadow(name: string, counts: ShadowCounts): Promise<void> {
    const key = `${name}\u0000${counts.activeVersion}\u0000${counts.candidateVersion}`;
    let c = this.shadows.get(key);
    if (c === undefined) {
      if (this.shadows.size >= MAX_SHADOW_PAIRS * 4) this.shadows.delete(this.shadows.keys().next().value as string);
      this.shadows.set(key, (c = emptyCounts(counts.activeVersion, counts.candidateVersion)));
    }
    addCounts(c, counts);
    return Promise.resolve();
  }

  shadow(name: string, activeVersion: string, candidateVersion: string): Promise<ShadowCounts | undefined> {
    const c = this.shadows.get(`${name}\u0000${activeVersion}\u0000${candidateVersion}`);
    return Promise.resolve(c === undefined ? undefined : addCounts(emptyCounts(activeVersion, candidateVersion), c));
  }

  dispose(): Promise<void> {
    this.disposed = true;
    this.listeners.clear();
    return Promise.resolve();
  }
}
