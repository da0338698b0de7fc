import type { TransactionGuard } from './transaction-guard';

/** How a transaction ended while its lock was held: published (now or before), or not. */
export type LockedStatus = 'done' | 'failed';

/** What {@link BatchLocks.run} returns. */
export interface LockedRun {
  /** Transactions whose lock the batch held, each with the signal that aborted if the lock was lost. */
  readonly held: ReadonlyMap<string, AbortSignal>;
  /** Transactions the batch could not lock (e.g. another instance held the lock too long), with the error. */
  readonly failed: ReadonlyMap<string, unknown>;
  /** Transactions another caller in this process was processing meanwhile, with how that ended. */
  readonly shared: ReadonlyMap<string, LockedStatus>;
}

/**
 * Holds the locks of a whole delivery batch at once, through the ordinary {@link TransactionGuard} (so
 * batches exclude each other across instances). Within the process, a transaction already being processed
 * by another call is not locked again: that call's status is awaited after this batch's work, never before
 * it (so two batches waiting on each other's transactions cannot deadlock).
 */
export class BatchLocks {
  private readonly inFlight = new Map<string, Promise<LockedStatus>>();
  constructor(private readonly guard: TransactionGuard) {}

  /**
   * Requests every lock together; `work` starts once each request was granted or refused (bounded by the
   * guard's wait) and gets the held ones; the locks are released once `work` settles. `work` returns the
   * status of each held transaction.
   */
  async run(
    transactionIds: readonly string[],
    work: (held: ReadonlyMap<string, AbortSignal>) => Promise<ReadonlyMap<string, LockedStatus>>,
  ): Promise<LockedRun> {
    const held = new Map<string, AbortSignal>();
    const failed = new Map<string, unknown>();
    const others = new Map<string, Promise<LockedStatus>>();
    let finish!: (statuses: ReadonlyMap<string, LockedStatus>) => void;
    const finished = new Promise<ReadonlyMap<string, LockedStatus>>((resolve) => (finish = resolve));
    const entered: Promise<void>[] = [];
    const runs: Promise<unknown>[] = [];
    for (const tx of transactionIds) {
      const other = this.inFlight.get(tx);
      if (other !== undefined) {
        others.set(tx, other);
        continue;
      }
      let enter!: () => void;
      entered.push(new Promise<void>((resolve) => (enter = resolve)));
      const run = this.guard
        .run<LockedStatus>(tx, async (lost) => {
          held.set(tx, lost);
          enter();
          return (await finished).get(tx) ?? 'failed';
        })
        .catch((err: unknown) => {
          if (!held.has(tx)) failed.set(tx, err);
          return 'failed' as const;
        })
        .finally(() => {
          enter();
          this.inFlight.delete(tx);
        });
      this.inFlight.set(tx, run);
      runs.push(run);
    }
    await Promise.all(entered);
    try {
      finish(await work(held));
    } catch (err) {
      finish(new Map());
      throw err;
    } finally {
      await Promise.all(runs);
    }
    const shared = new Map<string, LockedStatus>();
    for (const [tx, p] of others) shared.set(tx, await p);
    return { held, failed, shared };
  }
}
