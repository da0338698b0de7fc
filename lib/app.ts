/**
 * The composition root: builds the engine's object graph from configuration and clients. Production
 * defaults live here; tests pass their own dependencies. Nothing else reads `process.env`.
 */
import { loadConfig, type Config } from './config/config';
import { noHistoryProvider, type ContextProvider } from './context/context-provider';
import { Engine } from './engine';
import { FEATURE_NAMES } from './features/featurizer';
import type { BackendFactory } from './inference/backend';
import { inlineBackendFactory } from './inference/ort-session';
import { SessionManager } from './inference/session-manager';
import { ModelFolder, type ModelSource } from './models/model-folder';
import { Scorer } from './scoring/scorer';
import { createJsonLogger, type Logger } from './telemetry/logger';

/** Dependencies a caller may inject; every one has a production default. */
export interface EngineDeps {
  readonly logger?: Logger;
  readonly modelSource?: ModelSource;
  readonly backendFactory?: BackendFactory;
  readonly context?: ContextProvider;
  /** Monotonic clock, ms. */
  readonly now?: () => number;
}

/** Builds an engine from configuration. Loads nothing yet: call `engine.start()` (the app-start hook does). */
export async function createEngine(config: Config, deps: EngineDeps = {}): Promise<Engine> {
  const logger = deps.logger ?? createJsonLogger(config.logLevel);
  const modelSource = deps.modelSource ?? new ModelFolder(config.model.dir, config.model.name, config.model.version, FEATURE_NAMES);
  const factory =
    deps.backendFactory ??
    inlineBackendFactory({
      executionProviders: config.ort.executionProviders,
      intraOpThreads: config.ort.intraOpThreads,
      graphOptimization: config.ort.graphOptimization,
    });
  const sessions = await SessionManager.create({
    source: modelSource,
    factory,
    ...(deps.now === undefined ? {} : { now: deps.now }),
    on: {
      loaded: (e) =>
        logger.info('model loaded', {
          model: e.name,
          version: e.version,
          executionProviders: e.executionProviders,
          fallbackReason: e.fallbackReason,
          loadMs: Math.round(e.loadMs),
        }),
      loadFailed: (e) => logger.error('model load failed', { reason: e.reason }),
      released: (e) => logger.info('model released', { model: e.name, version: e.version }),
    },
  });
  const context = deps.context ?? noHistoryProvider;
  const scorer = new Scorer({ sessions, context, deadlineMs: config.inference.deadlineMs, ...(deps.now === undefined ? {} : { now: deps.now }) });
  return new Engine({ config, logger, sessions, context, scorer });
}

let shared: Promise<Engine> | undefined;

/**
 * The process-wide engine (module scope), created on first use from `process.env`. Every function
 * shares it, so a warm instance has one object graph.
 */
export function sharedEngine(): Promise<Engine> {
  shared ??= createEngine(loadConfig(process.env));
  return shared;
}

/** Disposes the process-wide engine, if created (app terminate hook). */
export async function disposeSharedEngine(): Promise<void> {
  const e = shared;
  shared = undefined;
  if (e !== undefined) await (await e).dispose();
}
