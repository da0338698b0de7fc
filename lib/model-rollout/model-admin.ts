/**
 * The admin API's logic (`/api/models…`, authLevel admin): status of the model across the fleet, promote,
 * rollback and traffic split. Bodies are validated strictly (every invalid field named, problem+json).
 */
import { AppError } from '../errors/errors';
import { AdminBodies } from '../rollout/admin-bodies';
import type { FleetReadiness } from '../inference/readiness-views';
import type { SessionManager } from '../inference/session-manager';
import { MODEL_NAME_RE, MODEL_VERSION_RE } from '../models/manifest';
import type { FleetAgent } from './fleet-agent';
import {
  promoteVersion,
  rollbackVersion,
  setTraffic,
  type FleetState,
  type ModelPointer,
  type Transition,
  type ValidationSummary,
} from './fleet-state';
import type { FleetStore, InstanceReport, Rejection } from './fleet-store';
import { shadowReport, type ScoreShadowReport } from './shadow-stats';

/** The admin bodies of models (the same parsing as every kind's; versions like `1.2.0`). */
export const MODEL_BODIES = new AdminBodies(MODEL_VERSION_RE, '1.2.0');

/** A version as the status shows it. */
export interface VersionView extends ModelPointer {
  readonly validation?: ValidationSummary;
}

/** `GET /api/models`: one entry per model name (this app serves one). */
export interface ModelStatus {
  readonly name: string;
  /** The pointer's generation (0: nothing published yet; every instance serves its bundled model). */
  readonly generation: number;
  readonly active: VersionView | undefined;
  readonly candidate: (VersionView & { readonly canaryPercent: number; readonly shadowPercent: number }) | undefined;
  /** What a rollback goes back to. */
  readonly previous: ModelPointer | undefined;
  /** Earlier active versions, newest first. */
  readonly history: readonly ModelPointer[];
  /** Validated versions (promotable, or usable as a candidate). */
  readonly versions: readonly string[];
  readonly lastChange: FleetState['lastChange'] | undefined;
  /** Instances that reported recently (each reconcile period). */
  readonly instances: readonly InstanceReport[];
  readonly lastRejection: Rejection | undefined;
  /** Shadow scoring: both versions' score distributions side by side (fleet-wide). */
  readonly shadow: ScoreShadowReport | undefined;
  /** The instance that answered. */
  readonly thisInstance: FleetReadiness & { readonly serving: string | undefined };
}

/** Dependencies of a {@link ModelAdmin}. */
export interface ModelAdminDeps {
  readonly modelName: string;
  readonly instanceId: string;
  readonly store: FleetStore;
  readonly sessions: SessionManager;
  readonly agent: FleetAgent;
  /** Wall clock, epoch ms. */
  readonly wallNow: () => number;
  /** Instance reports older than this are not shown, ms (3 reconcile periods). */
  readonly reportMaxAgeMs: number;
}

/** Admin operations on the served model. */
export class ModelAdmin {
  constructor(private readonly deps: ModelAdminDeps) {}

  /** @throws AppError `not_found` for another model name. */
  private checkName(name: string): void {
    if (!MODEL_NAME_RE.test(name) || name !== this.deps.modelName)
      throw new AppError(
        'not_found',
        `No model named "${name.slice(0, 64)}" is served here (this app serves "${this.deps.modelName}").`,
      );
  }

  private actor(): { by: string; at: string } {
    return { by: this.deps.instanceId, at: new Date(this.deps.wallNow()).toISOString() };
  }

  private published(name: string, cur: FleetState | undefined): FleetState {
    if (cur === undefined)
      throw new AppError(
        'conflict',
        `Nothing has been published for ${name} yet; every instance serves its bundled model.`,
        {
          transient: false,
        },
      );
    return cur;
  }

  private async change(name: string, fn: (s: FleetState) => Transition): Promise<ModelStatus> {
    this.checkName(name);
    await this.deps.store.update(name, (cur) => fn(this.published(name, cur)));
    await this.deps.agent.converge();
    return (await this.status()).models[0] as ModelStatus;
  }

  /** `GET /api/models`. */
  async status(): Promise<{ models: ModelStatus[] }> {
    const { store, modelName: name } = this.deps;
    await this.deps.agent.flushShadow();
    const [state, rejections, instances] = await Promise.all([
      store.read(name),
      store.rejections(name),
      store.instances(name, this.deps.wallNow() - this.deps.reportMaxAgeMs),
    ]);
    const view = (p: ModelPointer | undefined): VersionView | undefined => {
      if (p === undefined) return undefined;
      const v = state?.versions[p.version]?.validation;
      return { ...p, ...(v === undefined ? {} : { validation: v }) };
    };
    const t = state?.traffic;
    const candidate = t === undefined ? undefined : view(state?.versions[t.candidate]?.pointer);
    const shadow =
      t === undefined || state === undefined ? undefined : await store.shadow(name, state.active.version, t.candidate);
    return {
      models: [
        {
          name,
          generation: state?.generation ?? 0,
          active: view(state?.active),
          candidate:
            candidate === undefined || t === undefined
              ? undefined
              : { ...candidate, canaryPercent: t.canaryPercent, shadowPercent: t.shadowPercent },
          previous: state?.previous[0],
          history: state?.previous ?? [],
          versions: Object.keys(state?.versions ?? {}),
          lastChange: state?.lastChange,
          instances,
          lastRejection: rejections[0],
          shadow: shadow === undefined ? undefined : shadowReport(shadow),
          thisInstance: { ...this.deps.agent.readiness(), serving: this.deps.sessions.manifest?.version },
        },
      ],
    };
  }

  /**
   * Whether a promote or traffic change would be taken now (the transition run on the pointer, nothing written): what
   * four-eyes asks before it keeps a lead's request. @throws what the change would throw.
   */
  async check(name: string, change: 'promote' | 'traffic', body: unknown): Promise<void> {
    this.checkName(name);
    const cur = this.published(name, await this.deps.store.read(name));
    if (change === 'promote') promoteVersion(cur, MODEL_BODIES.version(body), this.actor());
    else setTraffic(cur, MODEL_BODIES.traffic(body), this.actor());
  }

  /** `POST /api/models/{name}/promote` `{ "version": "…" }`. */
  promote(name: string, body: unknown): Promise<ModelStatus> {
    this.checkName(name);
    const v = MODEL_BODIES.version(body);
    return this.change(name, (s) => promoteVersion(s, v, this.actor()));
  }

  /** `POST /api/models/{name}/rollback`: back to the previous pointer. */
  rollback(name: string): Promise<ModelStatus> {
    return this.change(name, (s) => rollbackVersion(s, this.actor()));
  }

  /** `PUT /api/models/{name}/traffic` `{ "candidate": "…", "canaryPercent": 0–100, "shadowPercent": 0–100 }`. */
  traffic(name: string, body: unknown): Promise<ModelStatus> {
    this.checkName(name);
    const split = MODEL_BODIES.traffic(body);
    return this.change(name, (s) => setTraffic(s, split, this.actor()));
  }
}
