/**
 * What follows a decision: the learning loop, the review cases, the audit trail, the webhooks, the ruleset drafts
 * and the console's views.
 * @module
 */
import { createCases } from '../cases/create-cases';
import { Insights } from '../insights/insights';
import { createDrafts } from '../governance/create-drafts';
import { createGovernance } from '../governance/governance';
import { GOVERNANCE_MIGRATIONS } from '../governance/migrations';
import { Identity } from '../identity/identity';
import { createLearning } from '../learning/create-learning';
import { createRecentDecisions } from '../learning/recent-decisions';
import { combineHandlers } from '../platform/combine-handlers';
import { subsystemsOf } from '../platform/registry';
import { createWebhooks } from '../webhooks/create-webhooks';
import { WEBHOOK_MIGRATIONS } from '../webhooks/migrations';
import { caseHandlers, INSIGHTS_MAX_RECORDS, INSIGHTS_TTL_MS } from './defaults';
import type { AppParts } from './parts';

const define = subsystemsOf<AppParts>();

export const caseSubsystems = [
  define({
    name: 'learning',
    needs: ['config', 'deps', 'logger', 'telemetry'],
    create: ({ config, deps, logger, telemetry }) =>
      createLearning(config, { logger, metrics: telemetry.learning, ...deps.learning }),
    dispose: (l) => l.dispose(),
  }),
  define({
    name: 'recent',
    needs: ['config', 'deps', 'logger', 'telemetry', 'learning', 'redis'],
    // nothing to show them without the case API, nothing to key them by without the decision log's hash key
    create: ({ config, deps, logger, telemetry, learning, redis }) =>
      config.cases.store.kind === 'none' || !config.learning.decisionLog.enabled
        ? undefined
        : createRecentDecisions(config, {
            redis,
            hash: () => learning.keyedHash,
            logger,
            on: telemetry.learning.recentEvents(),
            ...(deps.learning?.timers === undefined ? {} : { timers: deps.learning.timers }),
            ...(deps.learning?.wallClock === undefined ? {} : { wallClock: deps.learning.wallClock }),
          }),
    dispose: (r) => r?.dispose(),
  }),
  define({
    name: 'cases',
    needs: ['config', 'deps', 'logger', 'telemetry', 'learning', 'recent', 'decisioning', 'links'],
    create: ({ config, deps, logger, telemetry, learning, recent, decisioning, links }) =>
      createCases(config, {
        logger,
        ...(recent === undefined ? {} : { recent }),
        addLabels: (body) => learning.addLabels(body),
        ...(decisioning === undefined ? {} : { lists: decisioning.decisioning, rulesets: decisioning.decisioning }),
        ...(deps.bus === undefined ? {} : { bus: deps.bus }),
        migrations: [GOVERNANCE_MIGRATIONS, WEBHOOK_MIGRATIONS], // their tables live in the case database
        ...deps.cases,
        committed: () => links.webhooks.value?.wake(),
        on: caseHandlers(telemetry, deps.cases?.on),
      }),
    dispose: (c) => c.dispose(),
  }),
  define({
    name: 'governance',
    needs: ['config', 'deps', 'logger', 'cases'],
    create: ({ config, deps, logger, cases }) =>
      createGovernance({
        cases,
        identity: new Identity(config.cases.identity),
        logger,
        wallClock: deps.cases?.wallClock ?? Date.now,
      }),
  }),
  define({
    name: 'webhooks',
    needs: ['config', 'deps', 'logger', 'telemetry', 'cases', 'governance', 'links'],
    create: async ({ config, deps, logger, telemetry, cases, governance, links }) =>
      links.webhooks.bind(
        await createWebhooks(config, {
          logger,
          cases,
          record: (e) => governance.audit.record(e),
          wallClock: deps.cases?.wallClock ?? Date.now,
          ...deps.webhooks,
          on: combineHandlers(telemetry.webhookEvents(), deps.webhooks?.on),
        }),
      ),
    dispose: (w) => w.dispose(),
  }),
  define({
    name: 'drafts',
    needs: ['config', 'deps', 'cases', 'decisioning', 'learning', 'serving', 'governance', 'links'],
    create: ({ config, deps, cases, decisioning, learning, serving, governance, links }) => {
      const drafts = createDrafts(config, {
        cases,
        decisioning,
        learning,
        sessions: serving.sessions,
        record: (e) => governance.audit.record(e),
        wallClock: deps.learning?.wallClock ?? Date.now,
      });
      if (drafts !== undefined) links.drafts.bind(drafts.drafts);
      return drafts;
    },
    dispose: (d) => d?.dispose(),
  }),
  define({
    name: 'insights',
    needs: ['config', 'deps', 'clocks', 'serving', 'decisioning', 'signals', 'learning'],
    create: ({ config, deps, clocks, serving: { sessions, rollout }, decisioning, signals, learning }) => {
      const rulesetName = config.decisioning.rulesetName;
      const ruleset = () => decisioning?.decisioning.ruleset;
      return new Insights({
        identity: new Identity(config.cases.identity),
        store: learning.store,
        wallClock: deps.learning?.wallClock ?? Date.now,
        monotonic: clocks.now,
        model: () => sessions.manifest,
        ruleIds: () => ruleset()?.document.rules.map((r) => r.id) ?? [],
        ruleset: () => {
          const rs = ruleset();
          return rs === undefined ? undefined : { name: rs.name, version: rs.version, document: rs.document };
        },
        serving: async () => ({
          models: (await rollout.list()).models,
          rulesets:
            decisioning === undefined || rulesetName === undefined
              ? []
              : [await decisioning.rollout.status(rulesetName)],
          signals: [await signals.rollout.status(config.signals.name)],
        }),
        maxRecords: INSIGHTS_MAX_RECORDS,
        ttlMs: INSIGHTS_TTL_MS,
      });
    },
  }),
];
