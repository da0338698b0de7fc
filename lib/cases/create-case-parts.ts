/**
 * The parts of the case queue {@link createCases} assembles, each from configuration with its log lines: the store
 * (opened in the background), the intake queue it hands cases to, the writer, the sweep and the intake.
 */
import type { TokenCredential } from '@azure/identity';
import { NO_BUS, type MessageSender } from '../async/message-bus';
import type { Config } from '../config/config';
import { AppError } from '../errors/errors';
import type { Logger } from '../platform/logger';
import { unrefTimers, type Timers } from '../platform/timers';
import type { CaseStore } from './case-store';
import { loadQueues, type CaseRouter } from './case-queues';
import type { CaseLists } from './case-lists';
import type { RecentPayments } from './case-service-types';
import { CaseSweep, type CaseSweepEvents } from './case-sweep';
import { CaseWriter, type CaseWriterEvents } from './case-writer';
import type { CaseRulesets } from './case-signals';
import { BusCaseHandOff, type CaseHandOff } from './case-handoff';
import { CaseIntake, type CaseIntakeEvents } from './case-intake';
import { PgClient, type TokenSource } from '../platform/sql/pg-client';
import { PgliteClient } from '../platform/sql/pglite-client';
import { SqlCaseStore } from './sql-case-store';
import { GuardedCaseStore } from './guarded-case-store';
import type { MigrationSet } from '../platform/sql/migrate';
import type { OutboxRelayEvents } from './outbox-relay';
import { azureCredential } from '../platform/credential';

/** Dependencies of {@link createCases}; every one has a production default. */
export interface CasesDeps {
  readonly logger: Logger;
  /** The labels path (`Learning.addLabels`). */
  readonly addLabels: (body: unknown) => Promise<unknown>;
  /** The lists path (the decisioning); absent without a ruleset. */
  readonly lists?: CaseLists;
  /** The rulesets the instance holds (the decisioning): a case names the signals its fired rules read. */
  readonly rulesets?: CaseRulesets;
  /** The store; default the one `CASE_STORE` names. */
  readonly store?: CaseStore;
  /**
   * The migrations of the subsystems whose tables live in the case database (the governance's, the webhooks'),
   * applied with the case store's own in version order when the default store opens.
   */
  readonly migrations?: readonly MigrationSet[];
  /** Entra ID token source of `PG_ENTRA_AUTH`; default a `DefaultAzureCredential` (`AZURE_CLIENT_ID`). */
  readonly credential?: TokenSource;
  /** The host's bus (`npm start`: its embedded bus, with the journalled intake queue) when no Service Bus namespace is configured. */
  readonly bus?: MessageSender;
  /** Where cases are handed off; default the intake queue (`CASE_INTAKE_QUEUE`) on Service Bus or `bus`. */
  readonly handOff?: CaseHandOff;
  /** Service Bus credential; default a `DefaultAzureCredential` (`ServiceBusConnection__clientId`). */
  readonly serviceBusCredential?: TokenCredential;
  /** The intake's backoff while the database is unavailable, ms (tests); default 1 s doubling to 20 s. */
  readonly intakeRetry?: { readonly baseMs: number; readonly maxMs: number };
  readonly timers?: Timers;
  /** Wall clock, ms. */
  readonly wallClock?: () => number;
  /** Monotonic clock, ms. */
  readonly now?: () => number;
  /** The user's recent decisions the case answer shows; absent: none shown. */
  readonly recent?: RecentPayments;
  /** Called after a change that wrote case events commits (cases opened, a verdict): wakes the webhook relay. */
  readonly committed?: () => void;
  /** Telemetry's handlers of the writer's, the sweep's and the verdicts' events. */
  readonly on?: {
    readonly writer?: Partial<CaseWriterEvents>;
    readonly intake?: Partial<CaseIntakeEvents>;
    readonly sweep?: Partial<CaseSweepEvents>;
    readonly outbox?: Partial<OutboxRelayEvents>;
    readonly verdict?: (e: { readonly verdict: 'fraud' | 'legit' }) => void;
  };
}

/**
 * The store `CASE_STORE` names (migrated: the case store's migrations and `shared`, the governance's and the
 * webhooks' whose tables live in the case database), or `undefined` for `none`; it routes the cases it opens by
 * `router` (default the queues of `CASE_QUEUES_FILE`).
 */
export async function caseStore(
  config: Config,
  credential?: TokenSource,
  router?: CaseRouter,
  shared: readonly MigrationSet[] = [],
): Promise<CaseStore | undefined> {
  const s = config.cases.store;
  if (s.kind === 'none') return undefined;
  const queues = router ?? (await loadQueues(config.cases.queuesFile));
  const db =
    s.kind === 'pglite'
      ? await PgliteClient.create(s.dir)
      : await PgClient.create(s, credential, config.redis.managedIdentityClientId);
  try {
    return await SqlCaseStore.create(db, queues, shared);
  } catch (err) {
    await db.dispose().catch(() => undefined);
    throw err;
  }
}

/**
 * The store `CASE_STORE` names (or `deps.store`), opened in the background behind a guard: a database down at
 * start-up never stops scoring. Returns after the first attempt to open it.
 */
export async function guardedCaseStore(config: Config, deps: CasesDeps, router: CaseRouter): Promise<GuardedCaseStore> {
  const given = deps.store;
  const logger = deps.logger;
  const guarded = new GuardedCaseStore({
    open: async () =>
      given ??
      (await caseStore(config, deps.credential, router, deps.migrations)) ??
      Promise.reject(new Error('no case store')),
    timers: deps.timers ?? unrefTimers,
    onOpenFailed: (e) =>
      logger.error('cases: the case store could not be opened; cases are dropped and counted until it is', {
        error: e.error,
        retryInMs: e.retryInMs,
      }),
    onOpened: () => logger.info('cases: the case store is open; cases are written again'),
  });
  await guarded.firstAttempt();
  return guarded;
}

/** The writer the scorer feeds, handing cases to `handOff`; its drops and hand-off failures logged every 10 s at most. */
export function caseWriter(config: Config, deps: CasesDeps, handOff: CaseHandOff, wallClock: () => number): CaseWriter {
  const logger = deps.logger;
  let lastLog = Number.NEGATIVE_INFINITY;
  let since = 0;
  let total = 0;
  let lastFailLog = Number.NEGATIVE_INFINITY;
  return new CaseWriter({
    handOff,
    queueMax: config.cases.queueMax,
    batchMax: config.cases.batchMax,
    flushMs: config.cases.flushMs,
    timers: deps.timers ?? unrefTimers,
    wallClock,
    ...(deps.now === undefined ? {} : { now: deps.now }),
    ...(deps.rulesets === undefined ? {} : { rulesets: deps.rulesets }),
    on: {
      handedOff: (e) => deps.on?.writer?.handedOff?.(e),
      handOffFailed: (e) => {
        deps.on?.writer?.handOffFailed?.(e);
        if (wallClock() - lastFailLog < 10_000) return;
        lastFailLog = wallClock();
        logger.warn('cases: the intake queue is unreachable; cases wait in memory and are retried', { ...e });
      },
      dropped: (e) => {
        deps.on?.writer?.dropped?.(e);
        // every drop is counted exactly (cases.dropped, and the writer's stats); a line every 10 s at most
        since += e.count;
        total += e.count;
        const t = wallClock();
        if (t - lastLog < 10_000) return;
        logger.warn('cases: dropped', { count: since, total, reason: e.reason, error: e.error });
        since = 0;
        lastLog = t;
      },
    },
  });
}

/** The sweep of `store` (not started); a failed sweep is logged. */
export function caseSweep(config: Config, deps: CasesDeps, store: CaseStore, wallClock: () => number): CaseSweep {
  return new CaseSweep({
    store,
    intervalMs: config.cases.sweepIntervalMs,
    retentionMs: config.cases.retentionMs,
    timers: deps.timers ?? unrefTimers,
    wallClock,
    on: {
      ...deps.on?.sweep,
      failed: (e) => {
        deps.on?.sweep?.failed?.(e);
        deps.logger.warn('cases: sweep failed; the next one runs on schedule', { error: e.error });
      },
    },
  });
}

/** The intake that writes the intake queue's batches to `store`; rejected messages are logged. */
export function caseIntake(deps: CasesDeps, store: CaseStore, wallClock: () => number): CaseIntake {
  return new CaseIntake({
    store,
    timers: deps.timers ?? unrefTimers,
    wallClock,
    ...(deps.now === undefined ? {} : { now: deps.now }),
    ...(deps.intakeRetry === undefined
      ? {}
      : { retryBaseMs: deps.intakeRetry.baseMs, retryMaxMs: deps.intakeRetry.maxMs }),
    on: {
      ...deps.on?.intake,
      rejected: (e) => {
        deps.on?.intake?.rejected?.(e);
        deps.logger.warn('cases: intake messages rejected (sent to the rejected queue)', { ...e });
      },
    },
  });
}

/** The intake queue: Service Bus when a namespace is configured, else the host's bus (`npm start`: its embedded bus). */
export async function caseHandOff(config: Config, deps: CasesDeps): Promise<CaseHandOff> {
  const sb = config.serviceBus;
  if (sb.fullyQualifiedNamespace === undefined) {
    if (deps.bus === undefined)
      throw new AppError('config_invalid', `cases: no intake queue to hand cases to: ${NO_BUS.message}`, {
        errors: [NO_BUS],
      });
    return new BusCaseHandOff(deps.bus, config.cases.intakeQueue);
  }
  // the Azure SDKs load only here, when a namespace is configured (start-up time of `npm start`)
  const credential = deps.serviceBusCredential ?? azureCredential(sb.clientId);
  const { serviceBusCaseHandOff } = await import('./service-bus-handoff');
  deps.logger.info('cases: handed to the Service Bus intake queue', { queue: config.cases.intakeQueue });
  return serviceBusCaseHandOff(sb.fullyQualifiedNamespace, credential, config.cases.intakeQueue);
}
