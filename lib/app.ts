/**
 * The composition root: builds the engine's object graph from configuration and clients. Production
 * defaults live here; tests pass their own dependencies. Nothing else reads `process.env`.
 */
import { createAsyncScorer } from './async/create-async-scorer';
import { InProcessBus } from './async/in-process-bus';
import type { ResultPublisher } from './async/result-publisher';
import { loadConfig, type Config } from './config/config';
import { CachedContextProvider } from './context/cached-context-provider';
import type { ContextProvider } from './context/context-provider';
import { createContextProvider, type ContextProviderDeps } from './context/create-context-provider';
import { planRedisConnection } from './context/redis-connection';
import { Engine } from './engine';
import { FEATURE_NAMES } from './features/featurizer';
import type { BackendFactory } from './inference/backend';
import { batchedBackendFactory, inferenceLogEvents } from './inference/backend-factory';
import { ReadinessMonitor } from './inference/readiness-monitor';
import { SessionManager } from './inference/session-manager';
import { realTimers, type Timers } from './context/entra-auth';
import { ModelFolder, type ModelSource } from './models/model-folder';
import { planRollout, type RolloutDeps } from './rollout/create-rollout';
import type { ModelRollout } from './rollout/model-rollout';
import { Scorer } from './scoring/scorer';
import { createJsonLogger, type Logger } from './telemetry/logger';
import { combineHandlers, Telemetry } from './telemetry/telemetry';

/** Dependencies a caller may inject; every one has a production default. */
export interface EngineDeps {
  readonly logger?: Logger;
  readonly modelSource?: ModelSource;
  readonly backendFactory?: BackendFactory;
  readonly context?: ContextProvider;
  /** Clients for the default context provider (Redis client, credential, secret reader, clock); ignored with `context`. */
  readonly contextDeps?: ContextProviderDeps;
  /** Monotonic clock, ms. */
  readonly now?: () => number;
  /** Metrics and spans; default exports to Application Insights when its connection string is set. */
  readonly telemetry?: Telemetry;
  /** The embedded message bus (`npm start`); default the process-wide {@link inProcessBus}. */
  readonly bus?: InProcessBus;
  /** Where async results go; default the Service Bus topic if a namespace is configured, else the embedded bus. */
  readonly publisher?: ResultPublisher;
  /** Timers of the background readiness probe; default real (unref'd) timers. */
  readonly healthTimers?: Timers;
  /** Model rollout overrides: fleet store, models container, credential, reconcile timers, wall clock, instance id. */
  readonly rollout?: Partial<Omit<RolloutDeps, 'logger' | 'redis'>>;
}

let processBus: InProcessBus | undefined;

/** The process-wide embedded message bus (queues and topics of `npm start`). */
export function inProcessBus(): InProcessBus {
  return (processBus ??= new InProcessBus());
}

/** Builds an engine from configuration. Loads nothing yet: call `engine.start()` (the app-start hook does). */
export async function createEngine(config: Config, deps: EngineDeps = {}): Promise<Engine> {
  const logger = deps.logger ?? createJsonLogger(config.logLevel);
  const cs = config.telemetry.appInsightsConnectionString;
  const telemetry = deps.telemetry ?? (await Telemetry.create(cs === undefined ? {} : { connectionString: cs }));
  const modelSource =
    deps.modelSource ?? new ModelFolder(config.model.dir, config.model.name, config.model.version, FEATURE_NAMES);
  const factory =
    deps.backendFactory ??
    batchedBackendFactory(
      {
        ...config.inference,
        session: {
          executionProviders: config.ort.executionProviders,
          intraOpThreads: config.ort.intraOpThreads,
          graphOptimization: config.ort.graphOptimization,
        },
      },
      {
        pool: combineHandlers(inferenceLogEvents(logger).pool, telemetry.poolEvents()),
        batcher: telemetry.batcherEvents(),
      },
    );
  const context =
    deps.context ??
    (await createContextProvider(config, {
      logger,
      ...deps.contextDeps,
      on: combineHandlers(telemetry.contextEvents(), deps.contextDeps?.on),
    }));
  const redisConfigured =
    deps.context === undefined &&
    (deps.contextDeps?.redis !== undefined || planRedisConnection(config.redis).mode !== 'none');
  const redis = redisConfigured && context instanceof CachedContextProvider ? () => context.redisClient : undefined;
  const plan = planRollout(config, modelSource, { logger, redis, ...deps.rollout });
  const late: { rollout?: ModelRollout } = {}; // set below; the loaded event may only fire after createEngine
  const sessions = await SessionManager.create({
    source: plan.source,
    factory,
    ...(deps.now === undefined ? {} : { now: deps.now }),
    on: combineHandlers(telemetry.sessionEvents(), {
      loaded: (e) => {
        const fields = {
          model: e.name,
          version: e.version,
          executionProviders: e.executionProviders,
          fallbackReason: e.fallbackReason,
          loadMs: Math.round(e.loadMs),
        };
        if (e.fallbackReason === undefined) logger.info('model loaded', fields);
        else logger.warn('model loaded with an execution-provider fallback', fields);
        void late.rollout?.converge(); // the pointer may have moved during the first load
      },
      loadFailed: (e) => logger.error('model load failed', { reason: e.reason }),
      released: (e) => {
        logger.info('model released', { model: e.name, version: e.version });
        late.rollout?.reclaim();
      },
    }),
  });
  const rollout = (late.rollout = await plan.complete({ sessions, factory }));
  const scorer = new Scorer({
    sessions,
    router: rollout.router,
    context,
    deadlineMs: config.inference.deadlineMs,
    ...(deps.now === undefined ? {} : { now: deps.now }),
    on: combineHandlers(telemetry.scorerEvents(), {
      invalidScore: (e) =>
        logger.error('model output invalid: answered review (fail closed)', {
          model: e.model,
          version: e.modelVersion,
          kind: e.kind,
          rows: e.rows,
        }),
    }),
  });
  const { asyncScorer, publisher } = await createAsyncScorer(config, {
    scorer,
    sessions,
    logger,
    redis,
    bus: deps.bus ?? inProcessBus(),
    ...(deps.publisher === undefined ? {} : { publisher: deps.publisher }),
  });
  const readinessMonitor = new ReadinessMonitor({
    sessions,
    intervalMs: config.model.healthProbeIntervalMs,
    timers: deps.healthTimers ?? realTimers,
  });
  readinessMonitor.start(); // probes only once a model is loaded; disposed with the engine
  return new Engine({
    config,
    logger,
    sessions,
    context,
    scorer,
    asyncScorer,
    rollout,
    telemetry,
    readinessMonitor,
    disposables: [telemetry, publisher],
  });
}

let shared: Promise<Engine> | undefined;

/**
 * The process-wide engine (module scope), created on first use from `process.env`. Every function
 * shares it, so a warm instance has one object graph.
 */
export function sharedEngine(): Promise<Engine> {
  shared ??= createEngine(loadConfig(process.env), sharedDeps);
  return shared;
}

let sharedDeps: EngineDeps = {};

/**
 * Sets the dependencies of the process-wide engine (a host or a test injecting clients, clock or fault
 * wrappers). Must be called before the engine is first used.
 * @throws Error if the shared engine already exists.
 */
export function configureSharedEngine(deps: EngineDeps): void {
  if (shared !== undefined)
    throw new Error('configureSharedEngine must be called before the shared engine is first used');
  sharedDeps = deps;
}

/** Disposes the process-wide engine, if created (app terminate hook). */
export async function disposeSharedEngine(): Promise<void> {
  const e = shared;
  shared = undefined;
  if (e !== undefined) await (await e).dispose();
}
