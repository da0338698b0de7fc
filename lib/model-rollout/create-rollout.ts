/**
 * Builds model rollout from settings, in two steps around the session manager: first the fleet store,
 * the models container and the startup model source (the session manager loads through it); then the
 * validator, the fleet agent, the traffic router, the upload handler and the admin API, which need the
 * session manager.
 */
import type { StageTracer } from '../platform/stage-tracer';
import { hostname } from 'node:os';
import type { TokenCredential } from '@azure/identity';
import type { Redis } from 'ioredis';
import type { Config } from '../config/config';
import { unrefTimers, type Timers } from '../platform/timers';
import { AppError } from '../errors/errors';
import { FEATURE_NAMES } from '../features/featurizer';
import type { FeatureSupport } from '../models/model-folder';
import type { BackendFactory } from '../inference/backend';
import { batchedBackendFactory, inferenceSettings, resolveMode } from '../inference/backend-factory';
import { SessionManager } from '../inference/session-manager';
import type { Logger } from '../platform/logger';
import type { ModelSource } from '../models/model-folder';
import { parseFleetState, type FleetState } from './fleet-state';
import { BlobModelRepository, blobConfigured, type BlobRepositoryEvents } from './blob-model-repository';
import { agentLogEvents } from './agent-log-events';
import { FleetAgent, type FleetAgentEvents } from './fleet-agent';
import { FleetModelSource } from './fleet-model-source';
import type { FleetStore } from './fleet-store';
import { ModelAdmin } from './model-admin';
import { FolderModelRepository, type ModelRepository } from './model-repository';
import { ModelRollout } from './model-rollout';
import { ModelValidator } from './model-validator';
import { fullGc, MemoryReclaimer } from './reclaim';
import { fleetStore, MODEL_KIND } from './redis-fleet-reports';
import { createPointerStore } from '../rollout/create-pointer-store';
import { ShadowRecorder } from './shadow-stats';
import { ShippedModelSource } from './shipped-model';
import { TrafficRouter } from './traffic-router';
import { ModelKind } from './model-upload';
import { UploadPipeline } from '../rollout/upload-pipeline';
import { FourEyes, parseApprovalState, type ApprovalState } from '../rollout/four-eyes';
import { MODEL_BODIES } from './model-admin';
import { VersionLoader } from './version-loader';

/** Dependencies of model rollout; each has a production default. */
export interface RolloutDeps {
  readonly logger: Logger;
  /** The engine's shared Redis client, if Redis is configured (it may be set up later); else the in-process store. */
  readonly redis: (() => Redis | undefined) | undefined;
  /** Overrides the fleet store. */
  readonly store?: FleetStore;
  /** Overrides the models container. */
  readonly repository?: ModelRepository;
  /** For identity-based blob access. Default `DefaultAzureCredential`. */
  readonly credential?: TokenCredential;
  /** Reconcile timers. Default real (unref'd) timers. */
  readonly timers?: Timers;
  /** Wall clock, epoch ms (pointer timestamps, instance reports). Default `Date.now`. */
  readonly wallNow?: () => number;
  /** Default: `INSTANCE_ID` / `WEBSITE_INSTANCE_ID` / `CONTAINER_APP_REPLICA_NAME`, else `{hostname}-{pid}`. */
  readonly instanceId?: string;
  readonly on?: Partial<FleetAgentEvents>;
  /** Spans: `model.rollout` per upload, `model.check.<check>` per validation check. Default none. */
  readonly tracer?: StageTracer;
  /** Timing of the models container's calls (blob storage only; ignored with `repository`). Default none. */
  readonly blob?: Partial<BlobRepositoryEvents>;
  /**
   * What a manifest's features are verified against: each must be computed by the signals version it names
   * (lib/signals/feature-check.ts). Default the shipped feature list.
   */
  readonly features?: FeatureSupport;
}

/** Step one's result: the startup model source, and step two. */
export interface RolloutPlan {
  /** The session manager's source: the pointer's version, else the bundled model. */
  readonly source: ModelSource;
  /** Builds the rest once the session manager exists, and starts following the pointer. */
  complete(w: { readonly sessions: SessionManager; readonly factory: BackendFactory }): Promise<ModelRollout>;
}

/**
 * Step one: the fleet store (Redis when configured, else in-process), the models container (blob storage
 * when configured, else the local models folder) and the startup source.
 * @param base the bundled model folder source: without a pointer its shipped version serves (`shipped-model.ts`).
 * @throws AppError `config_invalid` for unusable storage settings.
 */
export function planRollout(config: Config, base: ModelSource, deps: RolloutDeps): RolloutPlan {
  const r = config.rollout;
  const logger = deps.logger;
  const instanceId = deps.instanceId ?? r.instanceId ?? `${hostname()}-${process.pid}`;
  const store =
    deps.store ??
    fleetStore(
      createPointerStore<FleetState>({
        kind: MODEL_KIND,
        redis: deps.redis,
        prefix: config.redis.keyPrefix,
        stateDir: r.stateDir,
        file: 'models.json',
        parse: parseFleetState,
        warn: (m) => deps.logger.warn(`rollout: ${m}`),
      }),
      config.redis.keyPrefix,
    );
  const features = deps.features ?? FEATURE_NAMES;
  const bundled = new FolderModelRepository(config.model.dir, r.storage.container);
  const repository =
    deps.repository ??
    (blobConfigured(r.storage)
      ? BlobModelRepository.create(r.storage, { credential: deps.credential, on: deps.blob })
      : bundled);
  logger.info(`model rollout: fleet store ${store.description}, models from ${repository.description}`, {
    instanceId,
    reconcileSec: r.reconcileIntervalMs / 1000,
  });
  const source = new FleetModelSource({
    name: config.model.name,
    store,
    repository,
    bundled,
    base: new ShippedModelSource(base, features),
    features,
    maxBytes: r.maxModelBytes,
    logger,
  });

  return {
    source,
    complete: (w) => completeRollout(config, deps, { instanceId, store, repository, bundled, features }, w),
  };
}

/** What step one chose, which step two builds on. */
interface StepOne {
  readonly instanceId: string;
  readonly store: FleetStore;
  readonly repository: ModelRepository;
  readonly bundled: FolderModelRepository;
  readonly features: FeatureSupport;
}

/**
 * Step two (the plan's `complete`): the candidates' session manager, the validator, the fleet agent, the traffic
 * router, the upload handler, the admin API and four-eyes; starts following the pointer.
 */
async function completeRollout(
  config: Config,
  deps: RolloutDeps,
  one: StepOne,
  { sessions, factory }: { readonly sessions: SessionManager; readonly factory: BackendFactory },
): Promise<ModelRollout> {
  const r = config.rollout;
  const logger = deps.logger;
  const { instanceId, store, repository, bundled, features } = one;
  const wallNow = deps.wallNow ?? Date.now;
  const timers = deps.timers ?? unrefTimers;
  const reclaimer = new MemoryReclaimer(timers, 1000, r.reclaimAfterSwap ? fullGc() : undefined);
  const candidates = await candidateSessions(factory, logger, reclaimer);
  const validator = modelValidator(config, deps, sessions, features);
  const loader = new VersionLoader({ repository, bundled, validator, maxBytes: r.maxModelBytes });
  const recorder = new ShadowRecorder();
  const router = new TrafficRouter({ active: sessions, candidate: candidates, recorder });
  const agent = new FleetAgent({
    name: config.model.name,
    instanceId,
    store,
    loader,
    sessions,
    candidates,
    router,
    recorder,
    timers,
    intervalMs: r.reconcileIntervalMs,
    wallNow,
    on: agentLogEvents(logger, deps.on),
  });
  const kind = new ModelKind({
    modelName: config.model.name,
    container: r.storage.container,
    maxBytes: r.maxModelBytes,
    shiftMax: r.shiftMax,
    forceKey: r.forceMetadataKey,
    instanceId,
    store,
    repository,
    validator,
    loader,
    sessions,
    direct: r.directRollout,
  });
  const upload = new UploadPipeline({ kind, store, follower: agent, instanceId, wallNow, logger });
  const admin = new ModelAdmin({
    modelName: config.model.name,
    instanceId,
    store,
    sessions,
    agent,
    wallNow,
    reportMaxAgeMs: 3 * r.reconcileIntervalMs,
  });
  const fourEyes = r.directRollout ? undefined : modelFourEyes(config, deps, admin, wallNow);
  const rollout = new ModelRollout({
    ...(fourEyes === undefined ? {} : { fourEyes }),
    upload,
    admin,
    agent,
    router,
    repository,
    store,
    candidates,
    loader,
    reclaimer,
    ...(deps.tracer === undefined ? {} : { tracer: deps.tracer }),
  });
  rollout.start();
  return rollout;
}

/** The candidate version's session manager (empty until the pointer names one); a release schedules a reclaim. */
function candidateSessions(
  factory: BackendFactory,
  logger: Logger,
  reclaimer: MemoryReclaimer,
): Promise<SessionManager> {
  return SessionManager.create({
    source: { load: () => Promise.reject(new AppError('model_not_ready', 'No candidate version is set.')) },
    factory,
    on: {
      released: (e) => {
        logger.info('candidate version released', { model: e.name, version: e.version });
        reclaimer.schedule();
      },
    },
  });
}

/** The validator of new versions, which runs a model small enough for inline mode in an isolated worker. */
function modelValidator(
  config: Config,
  deps: RolloutDeps,
  sessions: SessionManager,
  features: FeatureSupport,
): ModelValidator {
  const { inference } = config;
  const isolation = {
    factory: batchedBackendFactory(inferenceSettings(config, { mode: 'workers', workers: 1 })),
    when: (bytes: number) => resolveMode(inference.mode, bytes) === 'inline',
  };
  return new ModelValidator({
    sessions,
    features,
    batchMaxSize: inference.batchMaxSize,
    batchMaxSizeGpu: inference.batchMaxSizeGpu,
    isolation,
    ...(deps.tracer === undefined ? {} : { tracer: deps.tracer }),
  });
}

/** Four-eyes of the model's changes (`MODEL_DIRECT_ROLLOUT=false`): the pending approvals beside the pointer. */
function modelFourEyes(config: Config, deps: RolloutDeps, admin: ModelAdmin, wallNow: () => number): FourEyes {
  const r = config.rollout;
  return new FourEyes({
    kind: 'model',
    store: createPointerStore<ApprovalState>({
      kind: `${MODEL_KIND}-approval`,
      redis: deps.redis,
      prefix: config.redis.keyPrefix,
      stateDir: r.stateDir,
      file: 'model-approvals.json',
      parse: parseApprovalState,
      warn: (m) => deps.logger.warn(`rollout: ${m}`),
    }),
    bodies: MODEL_BODIES,
    wallNow,
    check: (name, change, body) => admin.check(name, change, body),
  });
}
