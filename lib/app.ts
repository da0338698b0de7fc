/**
 * The composition root: builds the engine's object graph from configuration and clients. Production
 * defaults live here; tests pass their own dependencies. Nothing else reads `process.env`.
 */
import { StaticFiles } from './http/static-files';
import { Insights } from './console/insights';
import type { DecisioningParts } from './decisioning/create-decisioning';
import { Identity } from './identity/identity';
import type { SessionManager } from './inference/session-manager';
import type { LearningStore } from './learning/learning-store';
import type { ModelRollout } from './rollout/model-rollout';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Redis } from 'ioredis';
import { Admission } from './admission/admission';
import { AdmissionGate } from './admission/admission-gate';
import { DeadlineAdmission } from './admission/deadline-admission';
import { createAsyncScorer } from './async/create-async-scorer';
import { InProcessBus } from './async/in-process-bus';
import type { ResultPublisher } from './async/result-publisher';
import { appRoot } from './config/app-root';
import { loadConfig, type Config } from './config/config';
import { CachedContextProvider } from './context/cached-context-provider';
import type { ContextProvider } from './context/context-provider';
import { createContextProvider, type ContextProviderDeps } from './context/create-context-provider';
import { planRedisConnection } from './platform/redis/connection';
import { createDecisioning, type DecisioningDeps } from './decisioning/create-decisioning';
import type { ServingSignals } from './decisioning/compile-ruleset';
import { aggregateStoreOf } from './signals/create-aggregate-store';
import { signalsFeatureCheck } from './signals/feature-check';
import type { CompiledSignals } from './signals/compiled-signals';
import { createSignals, type SignalsDeps } from './signals/create-signals';
import { allRequirements, modelRequirements, rulesetRequirements } from './signals/signals-requirements';
import { Engine } from './engine';
import { createLearning, type LearningDeps } from './learning/create-learning';
import { createCases, type CasesDeps } from './cases/create-cases';
import { createDrafts } from './governance/create-drafts';
import type { Drafts } from './governance/drafts';
import { createGovernance } from './governance/governance';
import { GOVERNANCE_MIGRATIONS } from './governance/migrations';
import { createWebhooks, type Webhooks, type WebhooksDeps } from './webhooks/create-webhooks';
import { WEBHOOK_MIGRATIONS } from './webhooks/migrations';
import type { EscalatorWiring } from './escalation/create-escalator';
import { escalationLogEvents } from './escalation/escalation-log-events';
import type { EscalationEvents } from './escalation/types';
import { FEATURE_NAMES } from './features/featurizer';
import type { BackendFactory } from './inference/backend';
import { batchedBackendFactory, inferenceLogEvents, inferenceSettings } from './inference/backend-factory';
import { ReadinessMonitor } from './inference/readiness-monitor';
import { currentReadiness } from './inference/readiness-views';
import { featureProblems, ModelFolder, type FeatureCheck, type ModelSource } from './models/model-folder';
import { createOip } from './oip/create-oip';
import type { StaticModel } from './oip/model-catalog';
import type { RolloutDeps } from './rollout/create-rollout';
import { createServing } from './rollout/create-serving';
import { Scorer, type ResultReviewer } from './scoring/scorer';
import { combineHandlers } from './platform/combine-handlers';
import { createJsonLogger, type Logger } from './platform/logger';
import { Telemetry } from './telemetry/telemetry';
import { tracedCatalog } from './telemetry/traced-catalog';
import { tracedContext, tracedPublisher, tracedRouter } from './telemetry/traced-components';
import { unrefTimers, type Timers } from './platform/timers';

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
  /** Signals rollout overrides: pointer store, signals container, credential, timers, wall clock, requirements. */
  readonly signals?: Partial<Omit<SignalsDeps, 'logger' | 'redis'>>;
  /** Model rollout overrides: fleet store, models container, credential, reconcile timers, wall clock, instance id. */
  readonly rollout?: Partial<Omit<RolloutDeps, 'logger' | 'redis'>>;
  /** Learning-loop overrides: store, timers, clocks, Key Vault reader. */
  readonly learning?: Partial<Omit<LearningDeps, 'logger'>>;
  /** Case queue overrides: store, PostgreSQL credential, timers, clocks. */
  readonly cases?: Partial<Omit<CasesDeps, 'logger' | 'addLabels' | 'lists'>>;
  /** Webhook overrides: topic publisher, fetch, timers, wall clock, event handlers. */
  readonly webhooks?: Partial<Omit<WebhooksDeps, 'logger' | 'cases' | 'record'>>;
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
  const clock = deps.now === undefined ? {} : { now: deps.now };
  const factory = telemetry.trackBackends(
    deps.backendFactory ??
      batchedBackendFactory(inferenceSettings(config), {
        pool: combineHandlers(inferenceLogEvents(logger).pool, telemetry.poolEvents()),
        batcher: telemetry.batcherEvents(),
      }),
  );
  const context =
    deps.context ??
    (await createContextProvider(config, {
      logger,
      ...deps.contextDeps,
      on: combineHandlers(telemetry.contextEvents(), deps.contextDeps?.on),
    }));
  const redis = sharedRedis(config, deps, context);
  // built later: the drafts once the case database is (the rollout reads approved drafts through it); the
  // signals after decisioning (a ruleset upload is checked against the serving signals version) and after the
  // models (a model's features are checked against the signals version its manifest names, once signals exist)
  const late: {
    drafts?: Drafts;
    webhooks?: Webhooks;
    servingSignals?: () => ServingSignals;
    features?: FeatureCheck;
  } = {};
  const features: FeatureCheck = (m) => late.features?.(m) ?? featureProblems(m, FEATURE_NAMES);
  const modelSource =
    deps.modelSource ?? new ModelFolder(config.model.dir, config.model.name, config.model.version, features);
  const { sessions, rollout } = await createServing(config, modelSource, {
    logger,
    redis,
    tracer: telemetry.tracer,
    blob: telemetry.blobEvents(),
    features,
    ...deps.rollout,
    factory,
    ...clock,
    sessionEvents: telemetry.sessionEvents(),
  });
  const escalator = await createEscalation(config, deps, logger, telemetry);
  const decisioning = await createDecisioning(config, {
    logger,
    redis,
    approvedDrafts: (name, version) => late.drafts?.approvedDocument(name, version) ?? Promise.resolve(undefined),
    servingSignals: () => late.servingSignals?.(),
    ...deps.decisioning,
  });
  const signals = await createSignals(config, {
    logger,
    redis,
    // what serves reads of the signals: the served model versions' input features, the ruleset's signals.<name>
    requirements: allRequirements(
      () => modelRequirements([sessions.manifest, rollout.router.candidateManifest]),
      () => rulesetRequirements([decisioning?.decisioning.ruleset]),
    ),
    ...deps.signals,
  });
  late.features = signalsFeatureCheck({
    name: config.signals.name,
    shipped: () => signals.shipped,
    compiled: (version) => signals.rollout.compiled(version),
  });
  const names = new WeakMap<CompiledSignals, ServingSignals>();
  late.servingSignals = () => {
    const active = signals.serving.active;
    let s = names.get(active);
    if (s === undefined) names.set(active, (s = { names: new Set(active.names), version: active.version }));
    return s;
  };
  const learning = await createLearning(config, { logger, metrics: telemetry.learning, ...deps.learning });
  const cases = await createCases(config, {
    logger,
    addLabels: (body) => learning.addLabels(body),
    ...(decisioning === undefined ? {} : { lists: decisioning.decisioning, rulesets: decisioning.decisioning }),
    bus: deps.bus ?? inProcessBus(),
    migrations: [GOVERNANCE_MIGRATIONS, WEBHOOK_MIGRATIONS], // their tables live in the case database
    ...deps.cases,
    committed: () => late.webhooks?.wake(), // built below, on the case database
    on: caseHandlers(telemetry, deps.cases?.on),
  });
  const governance = createGovernance({
    cases,
    identity: new Identity(config.cases.identity),
    logger,
    wallClock: deps.cases?.wallClock ?? Date.now,
  });
  const webhooks = (late.webhooks = await createWebhooks(config, {
    logger,
    cases,
    record: (e) => governance.audit.record(e),
    wallClock: deps.cases?.wallClock ?? Date.now,
    ...deps.webhooks,
    on: combineHandlers(telemetry.webhookEvents(), deps.webhooks?.on),
  }));
  const drafts = (late.drafts = createDrafts(config, {
    cases,
    decisioning,
    learning,
    sessions,
    record: (e) => governance.audit.record(e),
    wallClock: deps.learning?.wallClock ?? Date.now,
  }));
  const signalsDegraded = telemetry.contextEvents().degraded;
  const scorer = new Scorer({
    sessions,
    ...(decisioning === undefined ? {} : { decisioning: decisioning.decisioning }),
    router: tracedRouter(rollout.router, telemetry),
    context: tracedContext(context, telemetry, now),
    signals: {
      source: signals.serving,
      store: aggregateStoreOf(redis, { keyPrefix: config.redis.keyPrefix, ...config.signals }),
      timeoutMs: config.redis.timeoutMs,
      degraded: (e) => signalsDegraded?.(e), // counted with the context lookups' (context.degraded)
      shadow: signals.shadow,
      ...(deps.contextDeps?.now === undefined ? {} : { now: deps.contextDeps.now }), // the velocity windows' clock
    },
    deadlineMs: config.inference.deadlineMs,
    ...clock,
    ...(escalator === undefined ? {} : { escalator }),
    on: combineHandlers(telemetry.scorerEvents(), learning.scorerEvents(), cases.scorerEvents(), {
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
  const admission = new Admission(
    new DeadlineAdmission({ minBacklog: config.admission.minInflight }, deps.now, telemetry.deadlineAdmissionEvents()),
    new AdmissionGate(
      {
        maxLimit: config.admission.maxInflight,
        minLimit: config.admission.minInflight,
        intervalMs: config.admission.intervalMs,
      },
      deps.now,
      telemetry.admissionEvents(),
    ),
    config.admission.queueWaitMs,
  );
  const oip = await createOip({
    name: config.model.name,
    sessions,
    router: rollout.router,
    store: rollout.store,
    factory,
    ...(deps.oipModels === undefined ? {} : { staticModels: deps.oipModels }),
    decorateCatalog: (c) => tracedCatalog(c, telemetry),
    server: serverInfo(),
    isReady: () => currentReadiness(sessions, rollout, [rollout, decisioning?.rollout, signals.rollout]).ready, // as /api/health/ready
    ...clock,
  });
  const insights = createInsights(config, {
    sessions,
    rollout,
    decisioning,
    store: learning.store,
    wallClock: deps.learning?.wallClock ?? Date.now,
    monotonic: now,
  });
  const readinessMonitor = new ReadinessMonitor({
    sessions,
    intervalMs: config.model.healthProbeIntervalMs,
    timers: deps.healthTimers ?? unrefTimers,
  });
  readinessMonitor.start(); // probes only once a model is loaded; disposed with the engine
  return new Engine({
    config,
    logger,
    sessions,
    context,
    scorer,
    asyncScorer,
    admission,
    rollout,
    oip: oip.service,
    telemetry,
    now,
    readinessMonitor,
    ...(decisioning === undefined ? {} : { decisioning }),
    signals,
    learning,
    cases,
    governance,
    webhooks,
    ...(drafts === undefined ? {} : { drafts }),
    insights,
    disposables: [telemetry, publisher, ...oip.disposables, learning, cases, webhooks],
  });
}

/** The console's read-only views: rules, drift, what serves (docs/console.md). */
function createInsights(
  config: Config,
  p: {
    sessions: SessionManager;
    rollout: ModelRollout;
    decisioning: DecisioningParts | undefined;
    store: LearningStore;
    wallClock: () => number;
    monotonic: () => number;
  },
): Insights {
  const { sessions, rollout, decisioning } = p;
  const rulesetName = config.decisioning.rulesetName;
  return new Insights({
    identity: new Identity(config.cases.identity),
    store: p.store,
    wallClock: p.wallClock,
    monotonic: p.monotonic,
    model: () => sessions.manifest,
    ruleIds: () => {
      const rs = decisioning?.decisioning.ruleset;
      return rs === undefined ? [] : rs.document.rules.map((r) => r.id);
    },
    ruleset: () => {
      const rs = decisioning?.decisioning.ruleset;
      return rs === undefined ? undefined : { name: rs.name, version: rs.version, document: rs.document };
    },
    serving: async () => ({
      models: (await rollout.status()).models,
      rulesets:
        decisioning === undefined || rulesetName === undefined ? [] : [await decisioning.rollout.status(rulesetName)],
    }),
    maxRecords: INSIGHTS_MAX_RECORDS,
    ttlMs: INSIGHTS_TTL_MS,
  });
}

/** Decisions the console's rules and drift pages read per window at most (newest first). */
const INSIGHTS_MAX_RECORDS = 200_000;
/** How long the console's rules and drift figures are kept before they are read again. */
const INSIGHTS_TTL_MS = 60_000;

/** Telemetry's handlers of the case queue's events, with a caller's extra ones. */
function caseHandlers(telemetry: Telemetry, extra: CasesDeps['on']): NonNullable<CasesDeps['on']> {
  const t = telemetry.caseEvents();
  return {
    writer: combineHandlers(t.writer, extra?.writer),
    intake: combineHandlers(t.intake, extra?.intake),
    sweep: combineHandlers(t.sweep, extra?.sweep),
    outbox: combineHandlers(t.outbox, extra?.outbox),
    verdict: (e) => {
      t.verdict(e);
      extra?.verdict?.(e);
    },
  };
}

/** The engine's shared Redis client (the context provider's), when Redis is configured and the provider is ours. */
function sharedRedis(
  config: Config,
  deps: EngineDeps,
  context: ContextProvider,
): (() => Redis | undefined) | undefined {
  const configured =
    deps.context === undefined &&
    (deps.contextDeps?.redis !== undefined || planRedisConnection(config.redis).mode !== 'none');
  return configured && context instanceof CachedContextProvider ? () => context.redisClient : undefined;
}

/**
 * The LLM escalation, when configured. Its module loads only then: the OpenAI SDK, Azure identity and Key Vault
 * clients cost start-up time.
 */
async function createEscalation(
  config: Config,
  deps: EngineDeps,
  logger: Logger,
  telemetry: Telemetry,
): Promise<ResultReviewer | undefined> {
  if (config.escalation === undefined) return undefined;
  const { createEscalator } = await import('./escalation/create-escalator');
  return createEscalator(config.escalation, {
    logger,
    tracer: telemetry.tracer,
    ...deps.escalation,
    on: combineHandlers<EscalationEvents>(
      escalationLogEvents(logger),
      telemetry.escalationEvents(),
      deps.escalation?.on,
    ),
  });
}

let shared: Promise<Engine> | undefined;

/**
 * This process's settings, parsed from its environment. With the telemetry preload, the only code under `lib/`,
 * `functions/` and `scripts/` that reads `process.env` (lint enforces it): scripts get their settings here too.
 */
export function configFromEnvironment(): Config {
  return loadConfig(process.env);
}

/**
 * The process-wide engine (module scope), created on first use from `process.env`. Every function
 * shares it, so a warm instance has one object graph.
 */
export function sharedEngine(): Promise<Engine> {
  shared ??= createEngine(configFromEnvironment(), sharedDeps);
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

/**
 * The Functions `authLevel` of the routes people call from the console (cases, insights, `/api/me`). Behind Easy Auth
 * (`IDENTITY_MODE=easyauth`) it is `anonymous`: Easy Auth signs the user in before the request reaches the app and
 * the identity module refuses any request without its principal, while a function key cannot be kept in a browser
 * (the pattern of azure-functions-host#11394). Otherwise `function`, as the other API routes. Read when the
 * functions register, before the engine exists, so from the environment directly (a bad value is `function`).
 */
export function peopleRoutesAuthLevel(): 'anonymous' | 'function' {
  return (process.env['IDENTITY_MODE'] ?? '').trim() === 'easyauth' ? 'anonymous' : 'function';
}

let consoleFiles: Promise<StaticFiles> | undefined;

/** The console's built files (dist/console), read once per process. */
export function sharedConsoleFiles(): Promise<StaticFiles> {
  consoleFiles ??= StaticFiles.create(path.join(appRoot(), 'dist', 'console'));
  return consoleFiles;
}
