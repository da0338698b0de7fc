/** The scorer: one pipeline over the models, the context, the signals, the rules and the escalation. */
import { subsystemsOf } from '../platform/registry';
import { Scorer } from '../scoring/scorer';
import { combineHandlers } from '../platform/combine-handlers';
import { aggregateStoreOf } from '../signals/create-aggregate-store';
import { tracedContext, tracedRouter } from '../telemetry/traced-components';
import type { AppParts } from './parts';

export const scorerSubsystem = subsystemsOf<AppParts>()({
  name: 'scorer',
  needs: [
    'config',
    'deps',
    'logger',
    'telemetry',
    'clocks',
    'serving',
    'context',
    'redis',
    'decisioning',
    'signals',
    'escalator',
    'learning',
    'recent',
    'cases',
  ],
  create: (p) => {
    const { config, deps, logger, telemetry, clocks, decisioning, signals, escalator } = p;
    const signalsDegraded = telemetry.contextEvents().degraded;
    return new Scorer({
      sessions: p.serving.sessions,
      ...(decisioning === undefined ? {} : { decisioning: decisioning.decisioning }),
      router: tracedRouter(p.serving.rollout.router, telemetry),
      context: tracedContext(p.context, telemetry, clocks.now),
      signals: {
        source: signals.serving,
        store: aggregateStoreOf(p.redis, { keyPrefix: config.redis.keyPrefix, ...config.signals }),
        timeoutMs: config.redis.timeoutMs,
        degraded: (e) => signalsDegraded?.(e), // counted with the context lookups' (context.degraded)
        shadow: signals.shadow,
        ...(deps.contextDeps?.now === undefined ? {} : { now: deps.contextDeps.now }), // the velocity windows' clock
      },
      deadlineMs: config.inference.deadlineMs,
      ...clocks.clock,
      ...(escalator === undefined ? {} : { escalator }),
      on: combineHandlers(
        telemetry.scorerEvents(),
        p.learning.scorerEvents(),
        p.recent?.scorerEvents(),
        p.cases.scorerEvents(),
        {
          invalidScore: (e) =>
            logger.error('model output invalid: answered review (fail closed)', {
              model: e.model,
              version: e.modelVersion,
              kind: e.kind,
              rows: e.rows,
            }),
        },
      ),
    });
  },
});
