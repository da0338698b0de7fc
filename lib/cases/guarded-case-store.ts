/**
 * The case store as the engine uses it: opened in the background (a database that is down at start-up never stops
 * the service from scoring; it is tried again, 1 s doubling to 60 s), and every failure of the database is an
 * AppError `dependency_unavailable` (503, retry) rather than an unexpected error. While it is not open, the writer's
 * batches fail (dropped and counted) and the case API answers 503.
 */
import { AppError } from '../errors/errors';
import type { Timers } from '../platform/timers';
import type { CaseStore } from './case-store';
import { SqlCaseStore } from './sql-case-store';
import type { SqlClient } from '../platform/sql/sql-client';

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;

/** Options of a {@link GuardedCaseStore}. */
export interface GuardedCaseStoreOptions {
  /** Opens (and migrates) the store; called again after a failure. */
  readonly open: () => Promise<CaseStore>;
  readonly timers: Timers;
  /** Each failed attempt (`error`: the error's name); the composition root logs it. */
  readonly onOpenFailed?: (e: { readonly error: string; readonly retryInMs: number }) => void;
  /** The store opened after at least one failure. */
  readonly onOpened?: () => void;
}

function unavailable(err: unknown): AppError {
  return err instanceof AppError
    ? err
    : new AppError('dependency_unavailable', 'The case store is unavailable; retry the call.', {
        cause: err,
        transient: true,
        retryAfterSec: 5,
      });
}

/** A {@link CaseStore} opened in the background, whose failures are `dependency_unavailable`. */
export class GuardedCaseStore implements CaseStore {
  private store: CaseStore | undefined;
  private opening: Promise<void> | undefined;
  private handle: unknown;
  private delay = FIRST_RETRY_MS;
  private failures = 0;
  private closed = false;

  constructor(private readonly o: GuardedCaseStoreOptions) {
    this.attempt();
  }

  /** Resolves when the first attempt has ended, opened or not (start-up waits for it, bounded by the driver). */
  firstAttempt(): Promise<void> {
    return this.opening ?? Promise.resolve();
  }

  private attempt(): void {
    this.opening = this.o.open().then(
      (s) => {
        this.opening = undefined;
        if (this.closed) return void s.dispose().catch(() => undefined);
        this.store = s;
        if (this.failures > 0) this.o.onOpened?.();
      },
      (err: unknown) => {
        this.opening = undefined;
        this.failures++;
        if (this.closed) return;
        const retryInMs = this.delay;
        this.o.onOpenFailed?.({ error: err instanceof Error ? err.name : 'error', retryInMs });
        this.handle = this.o.timers.setTimeout(() => this.attempt(), retryInMs);
        this.delay = Math.min(this.delay * 2, MAX_RETRY_MS);
      },
    );
  }

  /**
   * The store's SQL connection once it is open (the governance tables live beside the cases).
   * @throws AppError `dependency_unavailable` (transient) until the store is open, or when it is not on SQL.
   */
  sql(): SqlClient {
    const s = this.store;
    if (s instanceof SqlCaseStore) return s.sql;
    throw new AppError('dependency_unavailable', 'The case database is not reachable yet; retry the call.', {
      transient: true,
      retryAfterSec: 5,
    });
  }

  private async call<T>(fn: (s: CaseStore) => Promise<T>): Promise<T> {
    const s = this.store;
    if (s === undefined)
      throw new AppError('dependency_unavailable', 'The case store is not reachable yet; retry the call.', {
        transient: true,
        retryAfterSec: 5,
      });
    try {
      return await fn(s);
    } catch (err) {
      throw unavailable(err);
    }
  }

  open: CaseStore['open'] = (...a) => this.call((s) => s.open(...a));
  get: CaseStore['get'] = (...a) => this.call((s) => s.get(...a));
  list: CaseStore['list'] = (...a) => this.call((s) => s.list(...a));
  next: CaseStore['next'] = (...a) => this.call((s) => s.next(...a));
  addNote: CaseStore['addNote'] = (...a) => this.call((s) => s.addNote(...a));
  assign: CaseStore['assign'] = (...a) => this.call((s) => s.assign(...a));
  close: CaseStore['close'] = (...a) => this.call((s) => s.close(...a));
  userCases: CaseStore['userCases'] = (...a) => this.call((s) => s.userCases(...a));
  eraseUser: CaseStore['eraseUser'] = (...a) => this.call((s) => s.eraseUser(...a));
  deleteDecidedBefore: CaseStore['deleteDecidedBefore'] = (...a) => this.call((s) => s.deleteDecidedBefore(...a));
  openStats: CaseStore['openStats'] = (...a) => this.call((s) => s.openStats(...a));
  slaBreaches: CaseStore['slaBreaches'] = (...a) => this.call((s) => s.slaBreaches(...a));
  analytics: CaseStore['analytics'] = (...a) => this.call((s) => s.analytics(...a));

  /** Stops retrying, waits for an attempt in flight, closes the store. */
  async dispose(): Promise<void> {
    this.closed = true;
    this.o.timers.clearTimeout(this.handle);
    await this.opening;
    await this.store?.dispose();
    this.store = undefined;
  }
}
