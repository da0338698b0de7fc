/** Builds the case queue from configuration (called once by the composition root). */
import type { Config } from '../config/config';
import { AppError } from '../errors/errors';
import { Identity } from '../identity/identity';
import type { ScorerEvents } from '../scoring/scorer';
import type { CaseStore } from './case-store';
import { loadQueues } from './case-queues';
import { CaseService } from './case-service';
import type { CaseSweep } from './case-sweep';
import type { CaseWriter, CaseWriterStats } from './case-writer';
import type { CaseHandOff } from './case-handoff';
import type { CaseIntake, IntakeMessage, RejectedCase } from './case-intake';
import { SqlCaseStore } from './sql-case-store';
import { GuardedCaseStore } from './guarded-case-store';
import type { SqlClient } from '../platform/sql/sql-client';
import type { OutboxRelay } from './outbox-relay';
import { verdictRelay } from './verdict-relay';
import { unrefTimers } from '../platform/timers';
import { caseHandOff, caseIntake, caseSweep, caseWriter, guardedCaseStore, type CasesDeps } from './create-case-parts';

export { caseStore, type CasesDeps } from './create-case-parts';

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
 * Builds the case queue: store (opened in the background: a database down at start-up never stops scoring), writer
 * (fed by the scorer), API with its identity, sweep.
 */
export async function createCases(config: Config, deps: CasesDeps): Promise<Cases> {
  if (deps.store === undefined && config.cases.store.kind === 'none') return new Cases(undefined, undefined, undefined);
  const logger = deps.logger;
  // the queues document is compiled once, before anything starts: a bad one fails the start naming its fields
  const router = await loadQueues(config.cases.queuesFile);
  // before the store opens: no intake queue to hand cases to fails the start with nothing to close
  const handOff = deps.handOff ?? (await caseHandOff(config, deps));
  const guarded = await guardedCaseStore(config, deps, router);
  const store: CaseStore = guarded;
  const wallClock = deps.wallClock ?? Date.now;
  const writer = caseWriter(config, deps, handOff, wallClock);
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
    ...(deps.recent === undefined ? {} : { recent: deps.recent }),
    wallClock,
    committed: () => {
      relay.wake();
      deps.committed?.();
    },
    ...(deps.on?.verdict === undefined ? {} : { on: { verdict: deps.on.verdict } }),
  });
  const sweep = caseSweep(config, deps, store, wallClock);
  sweep.start();
  relay.start();
  logger.info('cases: review cases are stored', {
    store: config.cases.store.kind,
    identity: config.cases.identity.mode,
    queues: router.queues.map((q) => q.queue),
  });
  const consumer = caseIntake(deps, store, wallClock);
  return new Cases(service, writer, store, sweep, relay, handOff, consumer, deps.committed);
}
