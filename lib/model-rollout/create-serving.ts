/**
 * Builds the served model: the session manager (it loads through the rollout's source) and the model rollout
 * (it swaps the session manager's versions), each of which needs the other. The session manager's `loaded`
 * and `released` events reach the rollout once it is built; models load only after the engine starts.
 */
import type { Config } from '../config/config';
import type { BackendFactory } from '../inference/backend';
import { SessionManager, type SessionManagerEvents } from '../inference/session-manager';
import type { ModelSource } from '../models/model-folder';
import { combineHandlers } from '../platform/combine-handlers';
import type { Logger } from '../platform/logger';
import { planRollout, type RolloutDeps } from './create-rollout';
import type { ModelRollout } from './model-rollout';

/** What {@link createServing} needs beyond the rollout's dependencies. */
export interface ServingDeps extends RolloutDeps {
  readonly factory: BackendFactory;
  /** Monotonic clock, ms; default the session manager's. */
  readonly now?: () => number;
  /** More handlers of the session manager's events (metrics); they run before the log lines. */
  readonly sessionEvents?: Partial<SessionManagerEvents>;
}

/** The served model. */
export interface Serving {
  readonly sessions: SessionManager;
  readonly rollout: ModelRollout;
}

/**
 * Builds the session manager and the rollout, and starts following the fleet pointer.
 * @param base the bundled model folder source (the fallback).
 * @throws AppError `config_invalid` for unusable storage settings.
 */
export async function createServing(config: Config, base: ModelSource, deps: ServingDeps): Promise<Serving> {
  const { factory, now, sessionEvents, ...rolloutDeps } = deps;
  const plan = planRollout(config, base, rolloutDeps);
  let rollout: ModelRollout | undefined = undefined; // set once built: an event before that has no rollout to reach
  const sessions = await SessionManager.create({
    source: plan.source,
    factory,
    ...(now === undefined ? {} : { now }),
    on: combineHandlers(sessionEvents, sessionLogEvents(deps.logger), {
      loaded: () => void rollout?.converge(), // the pointer may have moved during the first load
      released: () => rollout?.reclaim(),
    }),
  });
  rollout = await plan.complete({ sessions, factory });
  return { sessions, rollout };
}

/** Log lines of the session manager: loads (with any execution-provider fallback), failures, releases. */
function sessionLogEvents(logger: Logger): Partial<SessionManagerEvents> {
  return {
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
    },
    loadFailed: (e) => logger.error('model load failed', { reason: e.reason }),
    released: (e) => logger.info('model released', { model: e.name, version: e.version }),
  };
}
