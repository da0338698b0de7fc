/**
 * The composition root's floor: the logger, the clocks, the links, telemetry, the backend factory, the context
 * provider and the Redis connection it shares.
 * @module
 */
import { CachedContextProvider } from '../context/cached-context-provider';
import { createContextProvider } from '../context/create-context-provider';
import { planRedisConnection } from '../platform/redis/connection';
import { batchedBackendFactory, inferenceLogEvents, inferenceSettings } from '../inference/backend-factory';
import { combineHandlers } from '../platform/combine-handlers';
import { createJsonLogger } from '../platform/logger';
import { subsystemsOf } from '../platform/registry';
import { Telemetry } from '../telemetry/telemetry';
import { link } from './link';
import { observedBackends } from './observed-backends';
import type { AppParts } from './parts';

const define = subsystemsOf<AppParts>();

export const baseSubsystems = [
  define({
    name: 'logger',
    needs: ['config', 'deps'],
    create: ({ config, deps }) => deps.logger ?? createJsonLogger(config.logLevel),
  }),
  define({
    name: 'clocks',
    needs: ['deps'],
    create: ({ deps }) => ({
      now: deps.now ?? (() => performance.now()),
      clock: deps.now === undefined ? {} : { now: deps.now },
    }),
  }),
  define({
    name: 'links',
    needs: [],
    create: () => ({
      features: link('features'),
      servingSignals: link('servingSignals'),
      drafts: link('drafts'),
      webhooks: link('webhooks'),
    }),
  }),
  define({
    name: 'telemetry',
    needs: ['deps'],
    create: async ({ deps }) => deps.telemetry ?? (await Telemetry.create()),
    dispose: (t) => t.dispose(),
  }),
  define({
    name: 'backends',
    needs: ['config', 'deps', 'logger', 'telemetry'],
    create: ({ config, deps, logger, telemetry }) =>
      observedBackends(
        deps.backendFactory ??
          batchedBackendFactory(inferenceSettings(config), {
            pool: combineHandlers(inferenceLogEvents(logger).pool, telemetry.poolEvents()),
            batcher: telemetry.batcherEvents(),
          }),
        telemetry.backendEvents(),
      ),
  }),
  define({
    name: 'context',
    needs: ['config', 'deps', 'logger', 'telemetry'],
    create: async ({ config, deps, logger, telemetry }) =>
      deps.context ??
      (await createContextProvider(config, {
        logger,
        ...deps.contextDeps,
        on: combineHandlers(telemetry.contextEvents(), deps.contextDeps?.on),
      })),
    dispose: (c) => c.dispose(),
  }),
  define({
    name: 'redis',
    needs: ['config', 'deps', 'context'],
    create: ({ config, deps, context }) => {
      const configured =
        deps.context === undefined &&
        (deps.contextDeps?.redis !== undefined || planRedisConnection(config.redis).mode !== 'none');
      return configured && context instanceof CachedContextProvider ? () => context.redisClient : undefined;
    },
  }),
];
