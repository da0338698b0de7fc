/**
 * The model kind of the one admin (`lib/rollout/rollout-admin.ts`; `/api/models…`, authLevel admin): its bodies, the
 * name it serves, its fleet pointer's transitions (`fleet-state.ts`) and its status view: every kind's view
 * (`lib/rollout/rollout-status.ts`) with the fleet-wide shadow distributions and the model's own `fleet` field
 * (validated versions, the instances' reports, this instance's place in the rollout).
 * @module
 */
import { AppError } from '../errors/errors';
import type { FleetReadiness } from '../inference/readiness-views';
import type { SessionManager } from '../inference/session-manager';
import { MODEL_NAME_RE, MODEL_VERSION_RE } from '../models/manifest';
import { compareVersions } from '../models/model-folder';
import { AdminBodies } from '../rollout/admin-bodies';
import { RolloutAdmin, type AdminKind } from '../rollout/rollout-admin';
import { rolloutStatus, type RolloutStatus, type VersionView as CoreVersionView } from '../rollout/rollout-status';
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
import type { FleetStore, InstanceReport } from './fleet-store';
import { shadowReport, type ScoreShadowReport } from './shadow-stats';

/** The admin bodies of models (the same parsing as every kind's; versions like `1.2.0`). */
export const MODEL_BODIES = new AdminBodies(MODEL_VERSION_RE, '1.2.0');

/** A validated version as the model's `fleet` field shows it: where it is, its hash, how it validated. */
export interface VersionView extends ModelPointer {
  readonly validation?: ValidationSummary;
}

/** What only the model kind shows: the fleet. */
export interface ModelFleet {
  /** Validated versions (promotable, or usable as a candidate), newest first. */
  readonly versions: readonly VersionView[];
  /** Instances that reported recently (each reconcile period). */
  readonly instances: readonly InstanceReport[];
  /** The instance that answered: its place in the rollout. */
  readonly thisInstance: FleetReadiness;
}

/** `GET /api/models/{name}`: every kind's status view, with the fleet-wide shadow distributions and the fleet. */
export type ModelStatus = RolloutStatus<ScoreShadowReport, { readonly fleet: ModelFleet }>;

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

/** A model pointer as every kind's view shows a version: who made it active, when. */
const core = (p: ModelPointer): CoreVersionView => ({ version: p.version, by: p.publishedBy, at: p.publishedAt });

/** The model's admin: the one admin over the model kind. */
export class ModelAdmin extends RolloutAdmin<FleetState, ModelStatus> {
  constructor(private readonly deps: ModelAdminDeps) {
    super({ kind: modelKind(deps), instanceId: deps.instanceId, wallNow: deps.wallNow });
  }

  /** `GET /api/models`: one entry per model name (this app serves one). */
  async list(): Promise<{ models: ModelStatus[] }> {
    return { models: [await modelView(this.deps)] };
  }
}

/** The status view of the served model. */
async function modelView(d: ModelAdminDeps): Promise<ModelStatus> {
  const { store, modelName: name, agent } = d;
  await agent.flushShadow();
  const [state, rejections, instances] = await Promise.all([
    store.read(name),
    store.rejections(name),
    store.instances(name, d.wallNow() - d.reportMaxAgeMs),
  ]);
  const t = state?.traffic;
  const shadow =
    t === undefined || state === undefined ? undefined : await store.shadow(name, state.active.version, t.candidate);
  const readiness = agent.readiness();
  return rolloutStatus(
    {
      name,
      generation: state?.generation ?? 0,
      serving: d.sessions.manifest?.version,
      servingCandidate: readiness.candidateVersion,
      active: state === undefined ? undefined : core(state.active),
      previous: (state?.previous ?? []).map(core),
      traffic: t,
      lastChange: state?.lastChange,
      rejections,
      shadow: shadow === undefined ? undefined : shadowReport(shadow),
    },
    { fleet: { versions: versionsOf(state), instances, thisInstance: readiness } },
  );
}

/** The validated versions of `state`, newest first. */
function versionsOf(state: FleetState | undefined): VersionView[] {
  return Object.values(state?.versions ?? {})
    .map((r) => ({ ...r.pointer, ...(r.validation === undefined ? {} : { validation: r.validation }) }))
    .sort((a, b) => compareVersions(b.version, a.version));
}

/** The model kind as the one admin sees it. */
function modelKind(d: ModelAdminDeps): AdminKind<FleetState, ModelStatus> {
  const published = (name: string, cur: FleetState | undefined): FleetState => {
    if (cur === undefined)
      throw new AppError(
        'conflict',
        `Nothing has been published for ${name} yet; every instance serves its bundled model.`,
        { transient: false },
      );
    return cur;
  };
  const next = (t: Transition): FleetState | undefined => (t.changed ? t.state : undefined);
  return {
    bodies: MODEL_BODIES,
    checkName: (name) => {
      if (!MODEL_NAME_RE.test(name) || name !== d.modelName)
        throw new AppError(
          'not_found',
          `No model named "${name.slice(0, 64)}" is served here (this app serves "${d.modelName}").`,
        );
    },
    read: (name) => d.store.read(name),
    update: (name, fn) => d.store.pointers.update(name, fn),
    promote: (cur, version, name, stamp) => next(promoteVersion(published(name, cur), version, stamp)),
    rollback: (cur, name, stamp) => next(rollbackVersion(published(name, cur), stamp)),
    traffic: (cur, split, name, stamp) => next(setTraffic(published(name, cur), split, stamp)),
    previousOf: (cur) => cur?.previous[0]?.version,
    converge: () => d.agent.converge(),
    status: () => modelView(d),
  };
}
