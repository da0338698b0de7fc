/**
 * What serves a payment: the models (sessions and rollout), the LLM escalation, the rules and lists, the signals,
 * the scorer, async scoring, admission, the inference protocol and the readiness probe.
 * @module
 */
import { Admission } from '../admission/admission';
import { AdmissionGate } from '../admission/admission-gate';
import { DeadlineAdmission } from '../admission/deadline-admission';
import { createAsyncScorer } from '../async/create-async-scorer';
import type { ServingSignals } from '../decisioning/compile-ruleset';
import { createDecisioning } from '../decisioning/create-decisioning';
import { FEATURE_NAMES } from '../features/featurizer';
import { ReadinessMonitor } from '../inference/readiness-monitor';
import { currentReadiness } from '../inference/readiness-views';
import { featureProblems, ModelFolder, type FeatureCheck } from '../models/model-folder';
import { createOip } from '../oip/create-oip';
import { subsystemsOf } from '../platform/registry';
import { createServing } from '../model-rollout/create-serving';
import type { CompiledSignals } from '../signals/compiled-signals';
import { createSignals } from '../signals/create-signals';
import { signalsFeatureCheck } from '../signals/feature-check';
import { allRequirements, modelRequirements, rulesetRequirements } from '../signals/signals-requirements';
import { tracedCatalog } from '../telemetry/traced-catalog';
import { tracedPublisher } from '../telemetry/traced-components';
import { unrefTimers } from '../platform/timers';
import { createEscalation, serverInfo } from './defaults';
import type { AppParts } from './parts';
import { scorerSubsystem } from './scorer-subsystem';

const define = subsystemsOf<AppParts>();

export const servingSubsystems = [
  define({
    name: 'serving',
    needs: ['config', 'deps', 'logger', 'telemetry', 'backends', 'redis', 'clocks', 'links'],
    create: async ({ config, deps, logger, telemetry, backends, redis, clocks, links }) => {
      // until the signals are built, a model's features are checked against the built-in feature names
      const features: FeatureCheck = (m) => links.features.value?.(m) ?? featureProblems(m, FEATURE_NAMES);
      const modelSource =
        deps.modelSource ?? new ModelFolder(config.model.dir, config.model.name, config.model.version, features);
      return createServing(config, modelSource, {
        logger,
        redis,
        tracer: telemetry.tracer,
        blob: telemetry.blobEvents(),
        features,
        ...deps.rollout,
        factory: backends,
        ...clocks.clock,
        sessionEvents: telemetry.sessionEvents(),
      });
    },
    dispose: async ({ sessions, rollout }) => {
      await rollout.dispose();
      await sessions.dispose();
    },
  }),
  define({
    name: 'escalator',
    needs: ['config', 'deps', 'logger', 'telemetry'],
    create: ({ config, deps, logger, telemetry }) => createEscalation(config, deps, logger, telemetry),
  }),
  define({
    name: 'decisioning',
    needs: ['config', 'deps', 'logger', 'redis', 'links'],
    create: ({ config, deps, logger, redis, links }) =>
      createDecisioning(config, {
        logger,
        redis,
        approvedDrafts: (name, version) =>
          links.drafts.value?.approvedDocument(name, version) ?? Promise.resolve(undefined),
        servingSignals: () => links.servingSignals.value?.(),
        ...deps.decisioning,
      }),
    dispose: (d) => d?.dispose(),
  }),
  define({
    name: 'signals',
    needs: ['config', 'deps', 'logger', 'redis', 'serving', 'decisioning', 'links'],
    create: async ({ config, deps, logger, redis, serving: { sessions, rollout }, decisioning, links }) => {
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
      links.features.bind(
        signalsFeatureCheck({
          name: config.signals.name,
          shipped: () => signals.shipped,
          compiled: (version) => signals.rollout.compiled(version),
        }),
      );
      const names = new WeakMap<CompiledSignals, ServingSignals>();
      links.servingSignals.bind(() => {
        const active = signals.serving.active;
        let s = names.get(active);
        if (s === undefined) names.set(active, (s = { names: new Set(active.names), version: active.version }));
        return s;
      });
      return signals;
    },
    dispose: (s) => s.dispose(),
  }),
  scorerSubsystem,
  define({
    name: 'async',
    needs: ['config', 'deps', 'logger', 'telemetry', 'scorer', 'serving', 'redis', 'clocks'],
    create: ({ config, deps, logger, telemetry, scorer, serving, redis, clocks }) =>
      createAsyncScorer(config, {
        scorer,
        sessions: serving.sessions,
        logger,
        redis,
        ...(deps.bus === undefined ? {} : { bus: deps.bus }),
        ...(deps.publisher === undefined ? {} : { publisher: deps.publisher }),
        decoratePublisher: (p) => tracedPublisher(p, telemetry, config.serviceBus.resultsTopic, clocks.now),
        tracer: telemetry.tracer,
      }),
    dispose: ({ publisher }) => publisher.dispose(),
  }),
  define({
    name: 'admission',
    needs: ['config', 'deps', 'telemetry'],
    create: ({ config, deps, telemetry }) =>
      new Admission(
        new DeadlineAdmission(
          { minBacklog: config.admission.minInflight },
          deps.now,
          telemetry.deadlineAdmissionEvents(),
        ),
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
      ),
  }),
  define({
    name: 'oip',
    needs: ['config', 'deps', 'telemetry', 'serving', 'backends', 'decisioning', 'signals', 'clocks'],
    create: ({ config, deps, telemetry, serving: { sessions, rollout }, backends, decisioning, signals, clocks }) =>
      createOip({
        name: config.model.name,
        sessions,
        router: rollout.router,
        store: rollout.store,
        factory: backends,
        ...(deps.oipModels === undefined ? {} : { staticModels: deps.oipModels }),
        decorateCatalog: (c) => tracedCatalog(c, telemetry),
        server: serverInfo(),
        // as /api/health/ready
        isReady: () => currentReadiness(sessions, rollout, [rollout, decisioning?.rollout, signals.rollout]).ready,
        ...clocks.clock,
      }),
    dispose: async (oip) => {
      for (const d of [...oip.disposables].reverse()) await d.dispose();
    },
  }),
  define({
    name: 'readinessMonitor',
    needs: ['config', 'deps', 'serving'],
    create: ({ config, deps, serving }) => {
      const monitor = new ReadinessMonitor({
        sessions: serving.sessions,
        intervalMs: config.model.healthProbeIntervalMs,
        timers: deps.healthTimers ?? unrefTimers,
      });
      monitor.start(); // probes only once a model is loaded
      return monitor;
    },
    dispose: (m) => m.dispose(),
  }),
];
