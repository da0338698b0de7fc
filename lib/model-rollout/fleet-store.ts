/**
 * The model kind's view of the one pointer store (`lib/rollout`): the fleet pointer (a {@link FleetState} per model
 * name) with its transitions, the rejections, and what only models keep beside it: each instance's report and the
 * shadow statistics ({@link FleetReports}). On Redis (`redisFleetStore`) or in process ({@link memoryFleetStore}).
 */
import type { JsonFileMap } from '../persistence/json-file-map';
import { MemoryPointerStore, type PointerStore, type Rejection } from '../rollout/pointer-store';
import { parseFleetState, type FleetState, type Transition } from './fleet-state';
import { addCounts, emptyCounts, MAX_SHADOW_PAIRS, type ShadowCounts } from './shadow-stats';

export { MAX_REJECTIONS, type Rejection } from '../rollout/pointer-store';

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

/** Called when a model's pointer changed (`generation` is the new one; `"*"`, -1 after a reconnect). */
export type ChangeListener = (name: string, generation: number) => void;

/** What only the model kind keeps beside its pointer. */
export interface FleetReports {
  reportInstance(r: InstanceReport): Promise<void>;
  /** Reports newer than `sinceMs` (epoch ms); older ones are pruned. */
  instances(name: string, sinceMs: number): Promise<InstanceReport[]>;
  /** Adds an instance's shadow counts to the fleet-wide ones. */
  addShadow(name: string, counts: ShadowCounts): Promise<void>;
  /** Fleet-wide shadow counts of a pair, if any. */
  shadow(name: string, activeVersion: string, candidateVersion: string): Promise<ShadowCounts | undefined>;
}

/** The fleet pointer of the model kind: the pointer store with model transitions, and the fleet reports. */
export class FleetStore implements FleetReports {
  constructor(
    readonly pointers: PointerStore<FleetState>,
    private readonly reports: FleetReports,
  ) {}

  /** How logs name it, e.g. `redis` or `in-process`. */
  get description(): string {
    return this.pointers.description;
  }
  /** The current state of a model name, if any. @throws AppError `dependency_unavailable`. */
  read(name: string): Promise<FleetState | undefined> {
    return this.pointers.read(name);
  }
  /**
   * Applies a transition atomically (see {@link PointerStore.update}); an unchanged result writes and announces
   * nothing. Errors thrown by `fn` propagate.
   */
  async update(name: string, fn: (current: FleetState | undefined) => Transition): Promise<Transition> {
    let last: Transition | undefined;
    await this.pointers.update(name, (cur) => {
      last = fn(cur);
      return last.changed ? last.state : undefined;
    });
    return last as Transition;
  }
  subscribe(listener: ChangeListener): Promise<boolean> {
    return this.pointers.subscribe(listener);
  }
  recordRejection(r: Rejection): Promise<void> {
    return this.pointers.recordRejection(r);
  }
  rejections(name: string): Promise<Rejection[]> {
    return this.pointers.rejections(name);
  }
  reportInstance(r: InstanceReport): Promise<void> {
    return this.reports.reportInstance(r);
  }
  instances(name: string, sinceMs: number): Promise<InstanceReport[]> {
    return this.reports.instances(name, sinceMs);
  }
  addShadow(name: string, counts: ShadowCounts): Promise<void> {
    return this.reports.addShadow(name, counts);
  }
  shadow(name: string, activeVersion: string, candidateVersion: string): Promise<ShadowCounts | undefined> {
    return this.reports.shadow(name, activeVersion, candidateVersion);
  }
  dispose(): Promise<void> {
    return this.pointers.dispose();
  }
}

/** Instance reports and shadow counts in process (one instance). */
export class MemoryFleetReports implements FleetReports {
  private readonly reports = new Map<string, Map<string, InstanceReport>>();
  private readonly shadows = new Map<string, ShadowCounts>();

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
}

/**
 * The in-process fleet store (no Redis): one instance, same contract.
 * @param file where the pointers are kept across restarts (`ROLLOUT_STATE_DIR`); default none, in memory only.
 */
export function memoryFleetStore(file?: JsonFileMap<FleetState>): FleetStore {
  return new FleetStore(new MemoryPointerStore(file, parseFleetState), new MemoryFleetReports());
}
