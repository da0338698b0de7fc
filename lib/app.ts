/**
 * The composition root: builds the engine's object graph from configuration and clients. Production
 * defaults live here; tests pass their own dependencies. Nothing else reads `process.env`.
 */
import { AdmissionGate } from './admission/admission-gate';
import { createAsyncScorer } from './async/create-async-scorer';
import { InProcessBus } from './async/in-process-bus';
import type { ResultPublisher } from './async/result-publisher';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { appRoot } from './config/app-root';
import { loadConfig, type Config } from './config/config';
import { CachedContextProvider } from './context/cached-context-provider';
import type { ContextProvider } from './context/context-provider';
import { createContextProvider, type ContextProviderDeps } from './context/create-context-provider';
import { planRedisConnection } from './context/redis-connection';
import { createDecisioning, type DecisioningDeps } from './decisioning/create-decisioning';
import { Engine } from './engine';
import { createLearning, type LearningDeps } from './learning/create-learning';
import type { EscalatorWiring } from './escalation/create-escalator';
import type { EscalationEvents } from './escalation/types';
import { FEATURE_NAMES } from './features/featurizer';
import type { BackendFactory } from './inference/backend';
import { batchedBackendFactory, inferenceLogEvents } from './inference/backend-factory';
import { ReadinessMonitor } from './inference/readiness-monitor';
import { SessionManager } from './inference/session-manager';
import { unrefTimers, type Timers } from './time/timers';
import { ModelFolder, type ModelSource } from './models/model-folder';
import { RolloutCatalog, StaticCatalog, type ModelCatalog, type StaticModel } from './oip/model-catalog';
import { OipService } from './oip/oip-service';
import { planRollout, type RolloutDeps } from './rollout/create-rollout';
import type { ModelRollout } from './rollout/model-rollout';
import { Scorer } from './scoring/scorer';
import { createJsonLogger, type Logger } from './telemetry/logger';
import { combineHandlers, Telemetry } from './telemetry/telemetry';
import { tracedCatalog } from './telemetry/traced-catalog';
import { tracedContext, tracedPublisher, tracedRouter } from './telemetry/traced-components';

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
  /** Metrics and spans; default: on the process's providers (set up by `lib/telemetry/preload.ts`). */
  readonly telemetry?: Telemetry;
  /** The embedded message bus (`npm start`); default the process-wide {@link inProcessBus}. */
  readonly bus?: InProcessBus;
  /** Where async results go; default the Service Bus topic if a namespace is configured, else the embedded bus. */
  readonly publisher?: ResultPublisher;
  /**
   * Models served as they are through the Open Inference Protocol only (no manifest, no fraud validation),
   * loaded at creation through the same backend factory (micro-batcher included). Default none.
   */
  readonly oipModels?: readonly StaticModel[];
  /** LLM escalation overrides (credential, Key Vault reader, fetch, verdict client, clock, extra event handlers). */
  readonly escalation?: Partial<Omit<EscalatorWiring, 'logger'>>;
  /** Timers of the background readiness probe; default real (unref'd) timers. */
  readonly healthTimers?: Timers;
  /** Decisioning overrides: list store, ruleset pointer store, rulesets container, timers, wall clock. */
  readonly decisioning?: Partial<Omit<DecisioningDeps, 'logger' | 'redis'>>;
  /** Model rollout overrides: fleet store, models container, credential, reconcile timers, wall clock, instance id. */
  readonly rollout?: Partial<Omit<RolloutDeps, 'logger' | 'redis'>>;
  /** Learning-loop overrides: store, timers, clocks, Key Vault reader. */
  readonly learning?: Partial<Omit<LearningDeps, 'logger'>>;
}

/** This server's name and version (`package.json`), as the inference protocol's server metadata reports them. */
function serverInfo(): { readonly name: string; readonly version: string } {
  const pkg = JSON.parse(readFileSync(path.join(appRoot(), 'package.json'), 'utf8')) as Record<string, unknown>;
  return { name: String(pkg['name']), version: String(pkg['version']) };
}

let processBus: InProcessBus | undefined;

/** The process-wide embedded message bus (queues and topics of `npm start`). */
export function inProcessBus(): InProcessBus {
  return (processBus ??= new InProcessBus());
}

/** Builds an engine from configuration. Loads nothing yet: call `engine.start()` (the app-start hook does). */
export async function createEngine(config: Config, deps: EngineDeps = {}): Promise<Engine> {
  const logger = deps.logger ?? createJsonLogger(config.logLevel);
  const telemetry = deps.telemetry ?? (await Telemetry.create());
  const now = deps.now ?? (() => performance.now());
  const modelSource =
    deps.modelSource ?? new ModelFolder(config.model.dir, config.model.name, config.model.version, FEATURE_NAMES);
  const factory = telemetry.trackBackends(
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
      ),
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
  const plan = planRollout(config, modelSource, {
    logger,
    redis,
    tracer: telemetry.tracer,
    blob: telemetry.blobEvents(),
    ...deps.rollout,
  });
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
  // loaded only when escalation is on: the OpenAI SDK, Azure identity and Key Vault clients cost start-up time
  const escalator =
    config.escalation === undefined
      ? undefined
      : (await import('./escalation/create-escalator')).createEscalator(config.escalation, {
          logger,
          tracer: telemetry.tracer,
          ...deps.escalation,
          on: combineHandlers<EscalationEvents>(
            escalationLogEvents(logger),
            telemetry.escalationEvents(),
            deps.escalation?.on,
          ),
        });
  const decisioning = await createDecisioning(config, { logger, redis, ...deps.decisioning });
  const learning = await createLearning(config, { logger, metrics: telemetry.learning, ...deps.learning });
  const scorer = new Scorer({
    sessions,
    ...(decisioning === undefined ? {} : { decisioning: decisioning.decisioning }),
    router: tracedRouter(rollout.router, telemetry),
    context: tracedContext(context, telemetry, now),
    deadlineMs: config.inference.deadlineMs,
    ...(deps.now === undefined ? {} : { now: deps.now }),
    ...(escalator === undefined ? {} : { escalator }),
    on: combineHandlers(telemetry.scorerEvents(), learning.scorerEvents(), {
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
    decoratePublisher: (p) => tracedPublisher(p, telemetry, config.serviceBus.resultsTopic, now),
    tracer: telemetry.tracer,
  });
  const admission = new AdmissionGate(
    {
      maxLimit: config.admission.maxInflight,
      minLimit: config.admission.minInflight,
      intervalMs: config.admission.intervalMs,
    },
    deps.now,
    telemetry.admissionEvents(),
  );
  const extra = deps.oipModels === undefined ? undefined : await StaticCatalog.create(deps.oipModels, factory);
  const catalogs: ModelCatalog[] = [
    new RolloutCatalog({ name: config.model.name, sessions, router: rollout.router, store: rollout.store }),
    ...(extra === undefined ? [] : [extra]),
  ].map((c) => tracedCatalog(c, telemetry));
  const readinessMonitor = new ReadinessMonitor({
    sessions,
    intervalMs: config.model.healthProbeIntervalMs,
    timers: deps.healthTimers ?? unrefTimers,
  });
  readinessMonitor.start(); // probes only once a model is loaded; disposed with the engine
  const built: { engine?: Engine } = {}; // the readiness probe runs only after createEngine returns
  const oip = new OipService({
    catalogs,
    server: serverInfo(),
    // anonymous (v2/health/ready): a fixed reason, never the load error (that is the admin view's)
    ready: () =>
      Promise.resolve(
        (built.engine as Engine).ready().status === 'ready'
          ? { ready: true }
          : { ready: false, reason: 'No model is ready on this instance yet.' },
      ),
    ...(deps.now === undefined ? {} : { now: deps.now }),
  });
  const engine = (built.engine = new Engine({
    config,
    logger,
    sessions,
    context,
    scorer,
    asyncScorer,
    admission,
    rollout,
    oip,
    telemetry,
    now,
    readinessMonitor,
    ...(decisioning === undefined ? {} : { decisioning }),
    learning,
    disposables: [telemetry, publisher, ...(extra === undefined ? [] : [extra]), learning],
  }));
  return engine;
}

/** Log lines of the escalation: breaker changes, and failed escalations (outcome and fixed reason only). */
function escalationLogEvents(logger: Logger): Partial<EscalationEvents> {
  return {
    breakerStateChanged: (e) => {
      const fields = { previous: e.previous, openForMs: e.openForMs };
      if (e.state === 'open') logger.warn('llm escalation breaker open', fields);
      else logger.info(`llm escalation breaker ${e.state}`, fields);
    },
    escalated: (e) => {
      if (e.outcome === 'ok' || e.outcome === 'capped') return;
      const fields = { outcome: e.outcome, reason: e.reason };
      // nothing was sent while open or busy: one line per payment would flood the log
      if (e.outcome === 'breaker_open' || e.outcome === 'busy') logger.debug('llm escalation skipped', fields);
      else logger.warn('llm escalation fell back to the local result', fields);
    },
  };
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
