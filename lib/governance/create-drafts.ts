/** Builds the rule-change drafts from configuration (called once by the composition root). */
import type { Cases } from '../cases/create-cases';
import type { Config } from '../config/config';
import type { DecisioningParts } from '../decisioning/create-decisioning';
import { Identity } from '../identity/identity';
import type { SessionManager } from '../inference/session-manager';
import type { Learning } from '../learning/learning';
import type { AuditEntry } from './audit-log';
import { AppError } from '../errors/errors';
import { DraftBacktests } from './draft-backtest';
import { DraftStore, type Draft } from './draft-store';
import { Drafts } from './drafts';

/** Most decisions a draft's backtest replays (the newest of its window). */
export const DRAFT_BACKTEST_MAX_RECORDS = 200_000;
/** Backtests running at once on an instance. */
export const DRAFT_BACKTESTS_RUNNING = 2;
/** Most entries of one list a backtest reads (what a list rule matches in the replay). */
export const DRAFT_BACKTEST_LIST_ENTRIES = 10_000;

/** How long disposal waits for a stopped backtest to record that it was interrupted, ms. */
export const DRAFT_BACKTEST_STOP_WAIT_MS = 5_000;

/** The drafts, and the disposal of the backtests running on this instance. */
export interface DraftsRuntime {
  readonly drafts: Drafts;
  /** Stops the running backtests at their next chunk (each recorded `failed`: interrupted), and waits for them. */
  dispose(): Promise<void>;
}

/** The backtests of this instance, which stop at their next chunk once {@link stop} was called. */
class StoppableBacktests extends DraftBacktests {
  private readonly started = new Set<Draft>();

  constructor(
    deps: Omit<ConstructorParameters<typeof DraftBacktests>[0], 'yieldNow'>,
    private readonly state = { stopping: false },
  ) {
    super({
      ...deps,
      yieldNow: () =>
        state.stopping
          ? Promise.reject(new AppError('dependency_unavailable', 'interrupted: the instance stopped; run it again'))
          : new Promise<void>((r) => setImmediate(r)),
    });
  }

  override async start(d: Draft, fromMs: number, toMs: number, options?: { useCurrentLists?: boolean }): Promise<void> {
    for (const s of this.started) if (!this.isRunning(s)) this.started.delete(s);
    await super.start(d, fromMs, toMs, options);
    this.started.add(d);
  }

  /** Stops every running backtest at its next chunk and waits (a bounded time) for each to record it. */
  async stop(): Promise<void> {
    this.state.stopping = true;
    await Promise.all([...this.started].map((d) => this.settle(d, DRAFT_BACKTEST_STOP_WAIT_MS)));
    this.started.clear();
  }
}

/** What the drafts are built over. */
export interface DraftsParts {
  readonly cases: Cases;
  readonly decisioning: DecisioningParts | undefined;
  readonly learning: Learning;
  readonly sessions: SessionManager;
  /** Appends to the audit trail. */
  readonly record: (e: AuditEntry) => Promise<void>;
  /** Wall clock, epoch ms. */
  readonly wallClock: () => number;
}

/** The drafts of the served ruleset; `undefined` without a ruleset or without a case database (`CASE_STORE=none`). */
export function createDrafts(config: Config, p: DraftsParts): DraftsRuntime | undefined {
  const name = config.decisioning.rulesetName;
  const d = p.decisioning;
  if (name === undefined || d === undefined || config.cases.store.kind === 'none') return undefined;
  const store = new DraftStore(() => p.cases.sql());
  const backtests = new StoppableBacktests({
    store,
    learning: () => ({ store: p.learning.store, hash: p.learning.keyedHash }),
    thresholds: () => p.sessions.manifest?.thresholds ?? { review: 0.5, decline: 0.9 },
    lists: async (names) => {
      const out: Record<string, string[]> = {};
      for (const list of names) {
        const values: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await d.decisioning.listPage(list, cursor);
          for (const e of page.entries) values.push(e.value);
          cursor = page.cursor;
        } while (cursor !== undefined && values.length < DRAFT_BACKTEST_LIST_ENTRIES);
        out[list] = values;
      }
      return out;
    },
    wallClock: p.wallClock,
    maxRecords: DRAFT_BACKTEST_MAX_RECORDS,
    maxRunning: DRAFT_BACKTESTS_RUNNING,
  });
  const drafts = new Drafts({
    store,
    backtests,
    identity: new Identity(config.cases.identity),
    rulesetName: name,
    versions: () => d.repository.versions(name),
    read: (version) => d.repository.read(name, version),
    record: p.record,
    wallClock: p.wallClock,
    serving: () => {
      const rs = d.decisioning.ruleset;
      return rs === undefined ? undefined : { version: rs.version, document: rs.document };
    },
  });
  return { drafts, dispose: () => backtests.stop() };
}
