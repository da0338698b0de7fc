/**
 * A draft's backtest: the decision log's window replayed through the draft, joined to the labels, by the same
 * replay as `npm run backtest` (`BacktestReplay` in lib/learning/backtest.ts). It runs off the request path, a
 * chunk of records at a time with the event loop let go between chunks, over at most `maxRecords` decisions
 * (the newest of the window), at most `maxRunning` at once on an instance; its progress and its result are
 * stored with the draft, so any instance answers for it.
 * @module
 */
import { compileRuleset } from '../decisioning/compile-ruleset';
import type { Thresholds } from '../decisioning/evaluate-ruleset';
import type { RulesetDocument } from '../decisioning/ruleset-schema';
import { AppError, toAppError } from '../errors/errors';
import { BacktestReplay, notReplayable } from '../learning/backtest';
import type { ListsReport } from '../learning/backtest-lists';
import { labelsByTransaction, readDecisions, resolveLabel } from '../learning/decision-reader';
import type { KeyedHash } from '../platform/keyed-hash';
import type { LearningStore } from '../learning/learning-store';
import type { Draft, DraftBacktest, DraftStore } from './draft-store';

/** Dependencies of {@link DraftBacktests}. */
export interface DraftBacktestsDeps {
  readonly store: DraftStore;
  /** The decision log and labels, and the log's keyed hash (list entries are hashed with it); absent without. */
  readonly learning: () => { readonly store: LearningStore; readonly hash: KeyedHash | undefined } | undefined;
  /** The serving model's thresholds (where no profile of the draft applies). */
  readonly thresholds: () => Thresholds;
  /** The entries of the lists the draft reads (raw values; hashed here where the log holds hashes). */
  readonly lists: (names: readonly string[]) => Promise<Record<string, string[]>>;
  /** Wall clock, epoch ms. */
  readonly wallClock: () => number;
  /** Lets the event loop go between chunks. Default `setImmediate`. */
  readonly yieldNow?: () => Promise<void>;
  /** Most decisions replayed per backtest (the newest of the window). */
  readonly maxRecords: number;
  /** Backtests running at once on this instance. */
  readonly maxRunning: number;
  /** Records replayed between two yields. Default 2,000. */
  readonly chunk?: number;
}

/** The figures the console shows (see docs/governance.md). */
export interface DraftBacktestResult {
  readonly decisions: number;
  readonly labelled: number;
  readonly changes: Readonly<Record<string, number>>;
  readonly fraudNowCaught: number;
  readonly goodNowBlocked: number;
  readonly goodNowHeld: number;
  readonly reviewQueue: { current: number; candidate: number; days: number; growthPerDay: number };
  readonly rules: Readonly<Record<string, unknown>>;
  readonly firingTogether: readonly unknown[];
  readonly notReplayable: readonly { rule: string; fields: readonly string[] }[];
  /**
   * How the draft's lists were replayed: as each logged decision recorded them, else with today's entries
   * (`currentEntries`: records logged before memberships were, or new lists with `useCurrentLists`), else not
   * at all (`notReplayed`: the rules on a list the logged decisions did not consult, left out).
   */
  readonly lists: ListsReport & { readonly useCurrentLists: boolean };
  /** True when the window held more than `maxRecords` decisions (the newest were replayed). */
  readonly truncated: boolean;
}

const key = (d: Pick<Draft, 'name' | 'version'>): string => `${d.name}\u0000${d.version}`;

/** The backtests of drafts run on this instance. */
export class DraftBacktests {
  private readonly running = new Map<string, Promise<void>>();
  constructor(private readonly deps: DraftBacktestsDeps) {}

  /** Whether this instance is running the draft's backtest. */
  isRunning(d: Pick<Draft, 'name' | 'version'>): boolean {
    return this.running.has(key(d));
  }

  /** Resolves when the draft's backtest here has ended, or after `ms`, whichever is first. */
  async settle(d: Pick<Draft, 'name' | 'version'>, ms: number): Promise<void> {
    const job = this.running.get(key(d));
    if (job === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([job, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  /**
   * Starts the draft's backtest over `[fromMs, toMs)`; resolves once its `running` state is stored.
   * `useCurrentLists`: replay lists the logged decisions did not consult with today's entries.
   * @throws AppError `conflict` when one is running for the draft; `overloaded` when `maxRunning` are running.
   */
  async start(d: Draft, fromMs: number, toMs: number, options: { useCurrentLists?: boolean } = {}): Promise<void> {
    if (this.running.has(key(d))) throw new AppError('conflict', 'A backtest of this draft is running.');
    if (this.running.size >= this.deps.maxRunning)
      throw new AppError('overloaded', 'Other backtests are running; retry in a minute.', { retryAfterSec: 60 });
    const window = { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() };
    await this.write(d, { state: 'running', ...window, progress: { replayed: 0, total: 0 } });
    const job = this.run(d, fromMs, toMs, window, options.useCurrentLists === true)
      .catch((err: unknown) => this.write(d, { state: 'failed', ...window, error: toAppError(err).message }))
      .catch(() => undefined) // the store is down: the state stays `running` and reads as interrupted later
      .finally(() => this.running.delete(key(d)));
    this.running.set(key(d), job);
  }

  private async write(d: Draft, b: Omit<DraftBacktest, 'at'>): Promise<void> {
    const at = new Date(this.deps.wallClock()).toISOString();
    await this.deps.store.update(d.name, d.version, ['draft', 'submitted', 'approved', 'rejected'], {
      backtest: { ...b, at },
      at,
    });
  }

  private async run(
    d: Draft,
    fromMs: number,
    toMs: number,
    window: { from: string; to: string },
    useCurrentLists: boolean,
  ): Promise<void> {
    const learning = this.deps.learning();
    if (learning === undefined) throw new AppError('not_found', 'The decision log is off (DECISION_LOG=off).');
    const doc = d.document as RulesetDocument;
    const excluded = notReplayable(doc);
    const skip = new Set(excluded.map((e) => e.id));
    const ruleset = compileRuleset({
      ...doc,
      rules: doc.rules.filter((r) => !skip.has(r.id)),
      offsets: doc.offsets.filter((o) => !skip.has(o.id)),
      golden: [],
    });
    const records = await readDecisions(learning.store, fromMs, toMs, this.deps.maxRecords + 1);
    const truncated = records.length > this.deps.maxRecords;
    if (truncated) records.length = this.deps.maxRecords;
    const labels = new Map<string, 0 | 1>();
    for (const [tx, ls] of await labelsByTransaction(learning.store)) {
      const y = resolveLabel(ls.map((l) => l.label));
      if (y !== undefined) labels.set(tx, y);
    }
    const lists = await this.deps.lists(ruleset.listsUsed.map((u) => u.name));
    const replay = new BacktestReplay(
      labels,
      {
        ruleset,
        thresholds: this.deps.thresholds(),
        lists,
        useCurrentLists,
        ...(learning.hash === undefined ? {} : { hash: learning.hash }),
      },
      excluded,
    );
    const chunk = this.deps.chunk ?? 2_000;
    const yieldNow = this.deps.yieldNow ?? (() => new Promise<void>((r) => setImmediate(r)));
    let lastWrite = this.deps.wallClock();
    for (let i = 0; i < records.length; i += chunk) {
      replay.add(records.slice(i, i + chunk));
      if (this.deps.wallClock() - lastWrite >= 1_000) {
        lastWrite = this.deps.wallClock();
        await this.write(d, {
          state: 'running',
          ...window,
          progress: { replayed: replay.count, total: records.length },
        });
      }
      await yieldNow();
    }
    const r = replay.report();
    const days = Math.max((toMs - fromMs) / 86_400_000, 1 / 24);
    const result: DraftBacktestResult = {
      decisions: r.decisions,
      labelled: r.labelled,
      changes: r.changes,
      fraudNowCaught: r.fraudNowCaught,
      goodNowBlocked: r.goodNowBlocked,
      goodNowHeld: r.goodNowHeld,
      reviewQueue: {
        current: r.reviews.current,
        candidate: r.reviews.candidate,
        days: Math.round(days * 100) / 100,
        growthPerDay: Math.round(((r.reviews.candidate - r.reviews.current) / days) * 10) / 10,
      },
      rules: r.rules,
      firingTogether: r.firingTogether,
      notReplayable: excluded.map((e) => ({ rule: e.id, fields: e.fields })),
      lists: { ...r.lists, useCurrentLists },
      truncated,
    };
    await this.write(d, {
      state: 'done',
      ...window,
      progress: { replayed: r.decisions, total: records.length },
      result,
    });
  }
}
