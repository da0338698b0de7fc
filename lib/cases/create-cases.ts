/** Builds the case queue from configuration (called once by the composition root). */
import type { TokenCredential } from '@azure/identity';
import type { InProcessBus } from '../async/in-process-bus';
import type { Config } from '../config/config';
import { AppError } from '../errors/errors';
import { Identity } from '../identity/identity';
import type { ScorerEvents } from '../scoring/scorer';
import type { Logger } from '../platform/logger';
import { unrefTimers, type Timers } from '../platform/timers';
import type { CaseStore } from './case-store';
import { loadQueues, type CaseRouter } from './case-queues';
import { CaseService, type CaseLists } from './case-service';
import { CaseSweep, type CaseSweepEvents } from './case-sweep';
import { CaseWriter, type CaseWriterEvents, type CaseWriterStats } from './case-writer';
import type { CaseRulesets } from './case-signals';
import { BusCaseHandOff, type CaseHandOff } from './case-handoff';
import { CaseIntake, type CaseIntakeEvents, type IntakeMessage, type RejectedCase } from './case-intake';
import { PgClient, type TokenSource } from '../platform/sql/pg-client';
import { PgliteClient } from '../platform/sql/pglite-client';
import { SqlCaseStore } from './sql-case-store';
import { GuardedCaseStore } from './guarded-case-store';
import type { MigrationSet } from '../platform/sql/migrate';
import type { SqlClient } from '../platform/sql/sql-client';
import type { OutboxRelay, OutboxRelayEvents } from './outbox-relay';
import { verdictRelay } from './verdict-relay';
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
  /** The embedded bus (its journalled intake queue) when no Service Bus namespace is configured. */
  readonly bus?: InProcessBus;
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

/** The case queue of one engine: the writer the scorer feeds, and the API. */
export class Cases {
  constructor(
    /** The API's operations; `undefined` with `CASE_STORE=none`. */
    readonly service: CaseService | undefined,
    private readonly writer: CaseWriter | undefined,
    private readonly store: CaseStore | undefined,
    private readonly sweep?: CaseSweep,
    private readonly relay?: OutboxRelay,
    private readonly handOff?: CaseHandOff,
    private readonly consumer?: CaseIntake,
    private readonly committed?: () => void,
  ) {}

  /**
   * Writes one delivery batch of the intake queue to the store (the `caseIntake` function); returns the messages
   * rejected for good. Without a store, every message is rejected.
   * @throws AppError `dependency_unavailable` (after a backoff wait) while the database is unavailable.
   */
  intake(messages: readonly IntakeMessage[]): Promise<{ readonly opened: number; readonly rejected: RejectedCase[] }> {
    if (this.consumer !== undefined)
      return this.consumer.write(messages).then((r) => {
        if (r.opened > 0) this.committed?.();
        return r;
      });
    throw new AppError('not_found', 'No case database is configured (CASE_STORE=none).');
  }

  /** The scorer's `decided` handler (none without a store). */
  scorerEvents(): Partial<ScorerEvents> {
    return this.writer?.scorerEvents() ?? {};
  }

  /**
   * The case database's SQL connection (the governance tables live beside the cases).
   * @throws AppError `not_found` with `CASE_STORE=none`; `dependency_unavailable` until the store is open.
   */
  sql(): SqlClient {
    if (this.store instanceof GuardedCaseStore) return this.store.sql();
    if (this.store instanceof SqlCaseStore) return this.store.sql;
    throw new AppError('not_found', 'No case database is configured (CASE_STORE=none).');
  }

  /** The writer's totals (`undefined` without a store). */
  get stats(): CaseWriterStats | undefined {
    return this.writer?.stats;
  }

  /** Stops the sweep, writes every queued case, then closes the store. */
  async dispose(): Promise<void> {
    await this.sweep?.dispose();
    await this.writer?.dispose();
    await this.handOff?.dispose();
    await this.relay?.dispose();
    await this.store?.dispose();
  }
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
 * Builds the case queue: store (opened in the background: a database down at start-up never stops scoring), writer
 * (fed by the scorer), API with its identity, sweep.
 */
export async function createCases(config: Config, deps: CasesDeps): Promise<Cases> {
  if (deps.store === undefined && config.cases.store.kind === 'none') return new Cases(undefined, undefined, undefined);
  const logger = deps.logger;
  // the queues document is compiled once, before anything starts: a bad one fails the start naming its fields
  const router = await loadQueues(config.cases.queuesFile);
  const given = deps.store;
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
  const store: CaseStore = guarded;
  const wallClock = deps.wallClock ?? Date.now;
  let lastLog = Number.NEGATIVE_INFINITY;
  let since = 0;
  let total = 0;
  let lastFailLog = Number.NEGATIVE_INFINITY;
  const handOff = deps.handOff ?? (await caseHandOff(config, deps));
  const writer = new CaseWriter({
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
  const relay = verdictRelay({
    logger,
    addLabels: deps.addLabels,
    ...(deps.lists === undefined ? {} : { lists: deps.lists }),
    sql: () => guarded.sql(),
    timers: deps.timers ?? unrefTimers,
    wallClock,
    ...(deps.on?.outbox === undefined ? {} : { on: deps.on.outbox }),
  });
  const service = new CaseService({
    store,
    identity: new Identity(config.cases.identity),
    ...(deps.lists === undefined ? {} : { lists: deps.lists }),
    wallClock,
    committed: () => {
      relay.wake();
      deps.committed?.();
    },
    ...(deps.on?.verdict === undefined ? {} : { on: { verdict: deps.on.verdict } }),
  });
  const sweep = new CaseSweep({
    store,
    intervalMs: config.cases.sweepIntervalMs,
    retentionMs: config.cases.retentionMs,
    timers: deps.timers ?? unrefTimers,
    wallClock,
    on: {
      ...deps.on?.sweep,
      failed: (e) => {
        deps.on?.sweep?.failed?.(e);
        logger.warn('cases: sweep failed; the next one runs on schedule', { error: e.error });
      },
    },
  });
  sweep.start();
  relay.start();
  logger.info('cases: review cases are stored', {
    store: config.cases.store.kind,
    identity: config.cases.identity.mode,
    queues: router.queues.map((q) => q.queue),
  });
  const consumer = new CaseIntake({
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
        logger.warn('cases: intake messages rejected (sent to the rejected queue)', { ...e });
      },
    },
  });
  return new Cases(service, writer, store, sweep, relay, handOff, consumer, deps.committed);
}

/** The intake queue: Service Bus when a namespace is configured, else the embedded bus (`npm start`). */
async function caseHandOff(config: Config, deps: CasesDeps): Promise<CaseHandOff> {
  const sb = config.serviceBus;
  if (sb.fullyQualifiedNamespace === undefined) {
    if (deps.bus === undefined) throw new Error('cases: no Service Bus namespace and no embedded bus to hand cases to');
    return new BusCaseHandOff(deps.bus, config.cases.intakeQueue);
  }
  // the Azure SDKs load only here, when a namespace is configured (start-up time of `npm start`)
  const credential = deps.serviceBusCredential ?? azureCredential(sb.clientId);
  const { serviceBusCaseHandOff } = await import('./service-bus-handoff');
  deps.logger.info('cases: handed to the Service Bus intake queue', { queue: config.cases.intakeQueue });
  return serviceBusCaseHandOff(sb.fullyQualifiedNamespace, credential, config.cases.intakeQueue);
}
