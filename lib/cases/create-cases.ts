/** Builds the case queue from configuration (called once by the composition root). */
import type { Config } from '../config/config';
import { AppError } from '../errors/errors';
import { Identity } from '../identity/identity';
import type { ScorerEvents } from '../scoring/scorer';
import type { Logger } from '../telemetry/logger';
import { unrefTimers, type Timers } from '../time/timers';
import type { CaseStore } from './case-store';
import { CaseService, type CaseLists } from './case-service';
import { CaseSweep, type CaseSweepEvents } from './case-sweep';
import { CaseWriter, type CaseWriterEvents, type CaseWriterStats } from './case-writer';
import { PgClient, type TokenSource } from './pg-client';
import { PgliteClient } from './pglite-client';
import { SqlCaseStore } from './sql-case-store';
import { GuardedCaseStore } from './guarded-case-store';
import type { SqlClient } from './sql-client';
import type { OutboxRelay } from './outbox-relay';
import { verdictRelay } from './verdict-relay';

/** Dependencies of {@link createCases}; every one has a production default. */
export interface CasesDeps {
  readonly logger: Logger;
  /** The labels path (`Learning.addLabels`). */
  readonly addLabels: (body: unknown) => Promise<unknown>;
  /** The lists path (the decisioning); absent without a ruleset. */
  readonly lists?: CaseLists;
  /** The store; default the one `CASE_STORE` names. */
  readonly store?: CaseStore;
  /** Entra ID token source of `PG_ENTRA_AUTH`; default a `DefaultAzureCredential` (`AZURE_CLIENT_ID`). */
  readonly credential?: TokenSource;
  readonly timers?: Timers;
  /** Wall clock, ms. */
  readonly wallClock?: () => number;
  /** Monotonic clock, ms. */
  readonly now?: () => number;
  /** Telemetry's handlers of the writer's, the sweep's and the verdicts' events. */
  readonly on?: {
    readonly writer?: Partial<CaseWriterEvents>;
    readonly sweep?: Partial<CaseSweepEvents>;
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
  ) {}

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
    await this.relay?.dispose();
    await this.store?.dispose();
  }
}

/** The store `CASE_STORE` names (migrated), or `undefined` for `none`. */
export async function caseStore(config: Config, credential?: TokenSource): Promise<CaseStore | undefined> {
  const s = config.cases.store;
  if (s.kind === 'none') return undefined;
  const db =
    s.kind === 'pglite'
      ? await PgliteClient.create(s.dir)
      : await PgClient.create(s, credential, config.redis.managedIdentityClientId);
  try {
    return await SqlCaseStore.create(db);
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
  const given = deps.store;
  const guarded = new GuardedCaseStore({
    open: async () => given ?? (await caseStore(config, deps.credential)) ?? Promise.reject(new Error('no case store')),
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
  const writer = new CaseWriter({
    store,
    queueMax: config.cases.queueMax,
    batchMax: config.cases.batchMax,
    flushMs: config.cases.flushMs,
    timers: deps.timers ?? unrefTimers,
    wallClock,
    ...(deps.now === undefined ? {} : { now: deps.now }),
    on: {
      written: (e) => deps.on?.writer?.written?.(e),
      dropped: (e) => {
        deps.on?.writer?.dropped?.(e);
        // one line every 10 s at most, with the count since the last one (telemetry counts every drop)
        since += e.count;
        const t = wallClock();
        if (t - lastLog < 10_000) return;
        logger.warn('cases: dropped', { count: since, reason: e.reason, error: e.error });
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
  });
  const service = new CaseService({
    store,
    identity: new Identity(config.cases.identity),
    ...(deps.lists === undefined ? {} : { lists: deps.lists }),
    wallClock,
    committed: () => relay.wake(),
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
  });
  return new Cases(service, writer, store, sweep, relay);
}
