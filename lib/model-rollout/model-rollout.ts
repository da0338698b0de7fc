/**
 * Model rollout on one instance, as the engine exposes it: the blob-trigger entry (validate + publish),
 * the admin API, the fleet agent (follow the pointer) and the traffic router (canary, shadow).
 */
import type { ArtifactAdmin } from '../http/admin-routes';
import type { SessionManager } from '../inference/session-manager';
import type { ArtifactWait, FleetReadiness } from '../inference/readiness-views';
import type { FleetAgent } from './fleet-agent';
import type { FleetStore } from './fleet-store';
import type { ModelAdmin, ModelStatus } from './model-admin';
import type { ModelRepository } from './model-repository';
import type { MemoryReclaimer } from './reclaim';
import type { TrafficRouter } from './traffic-router';
import type { ArtifactUpload, UploadOutcome, UploadPipeline } from '../rollout/upload-pipeline';
import type { ModelPublished, ValidatedModel } from './model-upload';
import type { VersionLoader } from './version-loader';
import type { StageTracer } from '../platform/stage-tracer';
import type { FourEyes } from '../rollout/four-eyes';

/** The parts of a {@link ModelRollout} (built by `createRollout`). */
export interface ModelRolloutParts {
  readonly upload: UploadPipeline<ValidatedModel, ModelPublished>;
  readonly admin: ModelAdmin;
  readonly agent: FleetAgent;
  readonly router: TrafficRouter;
  readonly repository: ModelRepository;
  readonly store: FleetStore;
  readonly candidates: SessionManager;
  readonly loader: VersionLoader;
  readonly reclaimer: MemoryReclaimer;
  /** The four-eyes rule (`MODEL_DIRECT_ROLLOUT=false`); none: one admin's promote takes effect. */
  readonly fourEyes?: FourEyes;
  /** The upload runs in a `model.rollout` span. Default none. */
  readonly tracer?: StageTracer;
}

/** Model rollout on one instance. */
export class ModelRollout implements ArtifactAdmin {
  constructor(private readonly parts: ModelRolloutParts) {}

  /** Per-request routing (canary, shadow). */
  get router(): TrafficRouter {
    return this.parts.router;
  }
  /** The models container (the local host's feeders poll it). */
  get repository(): ModelRepository {
    return this.parts.repository;
  }
  /** The four-eyes rule on promote, canary and shadow, when it is on (`MODEL_DIRECT_ROLLOUT=false`). */
  get fourEyes(): FourEyes | undefined {
    return this.parts.fourEyes;
  }
  /** The fleet store (`redis` or `in-process`). */
  get store(): FleetStore {
    return this.parts.store;
  }

  /** The blob trigger's work: validate, then publish to the fleet (see {@link UploadPipeline.handle}). */
  handleUpload(upload: ArtifactUpload): Promise<UploadOutcome<ModelPublished>> {
    const tracer = this.parts.tracer;
    if (tracer?.enabled !== true) return this.parts.upload.handle(upload);
    const size = upload.bytes === undefined ? {} : { 'model.size_bytes': upload.bytes.length };
    return tracer.span('model.rollout', size, async (span) => {
      const outcome = await this.parts.upload.handle(upload);
      const r = outcome.kind === 'rejected' ? outcome.rejection : outcome;
      span.setAttributes({
        'model.name': r.name,
        'model.version': r.version,
        'rollout.outcome': outcome.kind,
        ...(outcome.kind === 'rejected' ? { 'rollout.check': outcome.rejection.check } : {}),
        ...(outcome.kind === 'published' ? { 'rollout.mode': outcome.mode } : {}),
      });
      return outcome;
    });
  }
  /** `GET /api/models/{name}`: the status view (every kind's, `lib/rollout/rollout-status.ts`). */
  status(name: string): Promise<ModelStatus> {
    return this.parts.admin.status(name);
  }
  /** `GET /api/models`: one entry per model name (this app serves one). */
  list(): Promise<{ models: ModelStatus[] }> {
    return this.parts.admin.list();
  }
  /** `POST /api/models/{name}/promote`. */
  promote(name: string, body: unknown): Promise<ModelStatus> {
    return this.parts.admin.promote(name, body);
  }
  /** `POST /api/models/{name}/rollback`. */
  rollback(name: string): Promise<ModelStatus> {
    return this.parts.admin.rollback(name);
  }
  /** `PUT /api/models/{name}/traffic`. */
  traffic(name: string, body: unknown): Promise<ModelStatus> {
    return this.parts.admin.traffic(name, body);
  }
  /** This instance's fleet status (part of readiness). */
  readiness(): FleetReadiness {
    return this.parts.agent.readiness();
  }
  /** What readiness waits for: the model pointer not read yet, or its active version not served here yet. */
  waiting(): ArtifactWait | undefined {
    return this.parts.agent.waiting();
  }
  /** A retired version was released: schedules a full GC so its model buffers are returned promptly (`MODEL_RECLAIM_AFTER_SWAP`). */
  reclaim(): void {
    this.parts.reclaimer.schedule();
  }
  /** Reconciles with the pointer now (also runs on announcements and every reconcile period). */
  converge(): Promise<void> {
    return this.parts.agent.converge();
  }
  /** Subscribes to announcements and starts the reconcile loop. */
  start(): void {
    this.parts.agent.start();
  }
  /** Stops following the pointer and releases the candidate and any unclaimed validated version. */
  async dispose(): Promise<void> {
    this.parts.reclaimer.dispose();
    await this.parts.agent.dispose();
    await this.parts.candidates.dispose();
    await this.parts.loader.dispose();
    await this.parts.store.dispose();
    await this.parts.fourEyes?.dispose();
    await this.parts.repository.dispose();
  }
}
