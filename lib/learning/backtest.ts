/**
 * Backtest: replays logged decisions against a candidate ruleset and/or model scores, and compares the
 * candidate's decisions with the logged ones: changes by direction, approval rate, precision and recall against
 * the labels. The log holds id fields only as keyed hashes: list rules are replayed by matching hashed entries;
 * a rule that reads a hashed id field (or `note`, never logged) in any other way is reported as not replayable
 * and left out of the replay, never silently. Lists are replayed as they were when each payment was decided
 * (the memberships the log recorded; lib/learning/backtest-lists.ts).
 */
import type { CompiledRuleset } from '../decisioning/compile-ruleset';
import { evaluateRuleset, thresholdDecision, type Thresholds } from '../decisioning/evaluate-ruleset';
import { ListReplay, type CurrentLists, type ListsReport } from './backtest-lists';
import { loggedSignals, metrics, r4, type SideMetrics } from './backtest-metrics';
import { HASHED_FIELDS, OMITTED_FIELDS, type DecisionRecord } from './decision-record';

/** A rule or offset the log cannot replay, and the fields that make it so. */
export interface NotReplayable {
  readonly id: string;
  readonly fields: readonly string[];
}

const UNLOGGED_RAW: readonly string[] = [...HASHED_FIELDS, ...OMITTED_FIELDS];

const HAS_HASHED = new RegExp(`\\bhas\\s*\\(\\s*event\\s*\\.\\s*(?:${HASHED_FIELDS.join('|')})\\s*\\)`, 'g');

/**
 * The fields of `when` the log cannot give raw: a hashed id field read other than as `in_list`'s key or inside
 * `has()`, or an omitted field. `in_list("x", event.deviceId)` is replayable (the list's entries are hashed the
 * same way), and so is `has(event.deviceId)`: the log keeps a hashed field exactly when the event had it.
 */
export function unreplayableFields(when: string): string[] {
  const outside = when
    .replace(/in_list\s*\(\s*("[^"]*"|'[^']*')\s*,\s*event\.[A-Za-z]+\s*\)/g, 'true')
    .replace(HAS_HASHED, 'true');
  return UNLOGGED_RAW.filter((f) =>
    new RegExp(`\\bevent\\s*(\\.\\s*${f}\\b|\\[\\s*["']${f}["']\\s*\\])`).test(outside),
  );
}

/** Every rule and offset of a ruleset document that the log cannot replay. */
export function notReplayable(doc: {
  readonly rules: readonly { id: string; when: string }[];
  readonly offsets: readonly { id: string; when: string }[];
}): NotReplayable[] {
  return [...doc.rules, ...doc.offsets]
    .map((r) => ({ id: r.id, fields: unreplayableFields(r.when) }))
    .filter((r) => r.fields.length > 0);
}

/** The backtest's report. */
export interface BacktestReport {
  readonly decisions: number;
  readonly labelled: number;
  readonly current: SideMetrics;
  readonly candidate: SideMetrics;
  /** Decision changes, `"approve→review"`: count. */
  readonly changes: Readonly<Record<string, number>>;
  readonly notReplayable: readonly NotReplayable[];
  /** Decisions the candidate sends to the LLM second opinion (replayed without it: the local decision counts). */
  readonly wouldEscalate: number;
  /** Which lists were replayed as recorded, with today's entries, or not at all. */
  readonly lists: ListsReport;
  /**
   * The signals the candidate's rules read (`signals.<name>`), replayed with the values each decision logged
   * (point in time). `recordsWithout`: decisions that logged none of some signal a rule reads (made before it
   * existed, or before signals were logged): such a rule reads no value there and fails closed (to review), so
   * those changes are not the draft's own; `notLogged` names the signals concerned.
   */
  readonly signals?: {
    readonly used: readonly string[];
    /** Aggregates replayed over the log, asked for with `--signals` (today's definition over past payments). */
    readonly replayed: readonly string[];
    readonly recordsWithout: number;
    readonly notLogged: readonly string[];
  };
}

/** The candidate to replay (with today's list entries, for lists the log did not record). */
export interface Candidate extends CurrentLists {
  /** Compiled without its not-replayable rules (see {@link notReplayable}). */
  readonly ruleset?: CompiledRuleset;
  /** The candidate model's score per transaction; default the logged score. */
  readonly scores?: ReadonlyMap<string, number>;
  /** Thresholds when no profile applies: the candidate model's, else the current model's. */
  readonly thresholds: Thresholds;
  /**
   * Asked for (`--signals`): values of aggregates a decision did not log, computed by replaying the log in time
   * order (lib/learning/signals-replay.ts), per transaction; the report names them (`signals.replayed`).
   */
  readonly replayedSignals?: {
    readonly names: readonly string[];
    readonly values: ReadonlyMap<string, Readonly<Record<string, number>>>;
  };
}

/** One rule of the candidate over the window: its hits, and their precision and recall against the labels. */
export interface ReplayedRule {
  readonly hits: number;
  /** Hits with a label. */
  readonly labelled: number;
  /** Hits labelled fraud. */
  readonly fraud: number;
  /** fraud ÷ labelled (0 when none of its hits is labelled). */
  readonly precision: number;
  /** fraud ÷ every labelled fraud in the window (0 when there is none). */
  readonly recall: number;
}

/** What the candidate changes for people: labelled payments, the review queue, its rules. */
export interface ReplayFigures {
  /** Labelled fraud the current decision approved and the candidate holds or declines. */
  readonly fraudNowCaught: number;
  /** Labelled good payments the current decision did not decline and the candidate declines. */
  readonly goodNowBlocked: number;
  /** Labelled good payments the current decision approved and the candidate sends to review. */
  readonly goodNowHeld: number;
  /** Decisions `review`, logged and replayed. */
  readonly reviews: { readonly current: number; readonly candidate: number };
  /** The candidate's rules that fired, by id. */
  readonly rules: Readonly<Record<string, ReplayedRule>>;
  /** Pairs of the candidate's rules that fired on the same payment, most first (at most 20). */
  readonly firingTogether: readonly { readonly rules: readonly [string, string]; readonly count: number }[];
}

/**
 * The replay, fed in chunks (a long window is replayed a chunk at a time, off the request path, with its
 * progress): {@link add} replays records, {@link report} gives the report so far. {@link backtest} is one replay
 * over every record; the drafts' backtest and `npm run backtest` share it.
 */
export class BacktestReplay {
  private readonly lists: ListReplay | undefined;
  private readonly changes: Record<string, number> = {};
  private readonly logged: string[] = [];
  private readonly replayed: string[] = [];
  private readonly ys: (0 | 1 | undefined)[] = [];
  private readonly ruleHits = new Map<string, { hits: number; labelled: number; fraud: number }>();
  private readonly pairs = new Map<string, number>();
  private wouldEscalate = 0;
  private fraudNowCaught = 0;
  private goodNowBlocked = 0;
  private goodNowHeld = 0;
  private recordsWithoutSignals = 0;
  private readonly signalsNotLogged = new Set<string>();

  constructor(
    private readonly labels: ReadonlyMap<string, 0 | 1>,
    private readonly candidate: Candidate,
    private readonly excluded: readonly NotReplayable[] = [],
  ) {
    this.lists = candidate.ruleset === undefined ? undefined : new ListReplay(candidate.ruleset, candidate);
  }

  /** Decisions replayed so far. */
  get count(): number {
    return this.replayed.length;
  }

  /** Replays `records`. */
  add(records: Iterable<DecisionRecord>): void {
    const c = this.candidate;
    for (const r of records) {
      const score = c.scores?.get(r.transactionId) ?? r.score;
      const y = this.labels.get(r.transactionId);
      let decision: string;
      let fired: readonly string[] = [];
      if (this.lists !== undefined) {
        const { ruleset, lists } = this.lists.forRecord(r);
        this.countSignals(ruleset, r);
        const out = evaluateRuleset(ruleset, {
          event: r.event,
          features: r.features,
          ...this.signalsOf(r),
          velocity: r.velocity as unknown as Readonly<Record<string, number>>,
          score,
          lists,
          fallbackThresholds: c.thresholds,
        });
        decision = out.decision;
        fired = out.rules.map((f) => f.id);
        if (out.escalate) this.wouldEscalate++;
      } else decision = thresholdDecision(score, c.thresholds);
      this.count1(r.decision, decision, y, fired);
    }
  }

  /** The signal values a record's replay reads: logged, then replayed when asked for. */
  private signalsOf(r: DecisionRecord): { signals?: Readonly<Record<string, number>> } {
    const replayed = this.candidate.replayedSignals?.values.get(r.transactionId);
    if (r.signalsVersion === undefined && replayed === undefined) return {};
    return { signals: replayed === undefined ? loggedSignals(r) : { ...replayed, ...loggedSignals(r) } };
  }

  /** Counts a record that lacks a signal the candidate's rules read (logged or, when asked for, replayed). */
  private countSignals(ruleset: CompiledRuleset, r: DecisionRecord): void {
    let lacking = false;
    const replayed = this.candidate.replayedSignals?.values.get(r.transactionId);
    for (const name of ruleset.signalsUsed)
      if (r.signals?.[name] === undefined && r.features[name] === undefined && replayed?.[name] === undefined) {
        this.signalsNotLogged.add(name);
        lacking = true;
      }
    if (lacking) this.recordsWithoutSignals++;
  }

  private count1(was: string, now: string, y: 0 | 1 | undefined, fired: readonly string[]): void {
    this.logged.push(was);
    this.replayed.push(now);
    this.ys.push(y);
    if (now !== was) {
      const k = `${was}→${now}`;
      this.changes[k] = (this.changes[k] ?? 0) + 1;
      if (y === 1 && was === 'approve') this.fraudNowCaught++;
      if (y === 0 && now === 'decline') this.goodNowBlocked++;
      if (y === 0 && was === 'approve' && now === 'review') this.goodNowHeld++;
    }
    for (const id of fired) {
      let e = this.ruleHits.get(id);
      if (e === undefined) this.ruleHits.set(id, (e = { hits: 0, labelled: 0, fraud: 0 }));
      e.hits++;
      if (y !== undefined) e.labelled++;
      if (y === 1) e.fraud++;
    }
    for (let i = 0; i < fired.length; i++)
      for (let j = i + 1; j < fired.length; j++) {
        const k = [fired[i], fired[j]].sort().join('\u0000');
        this.pairs.set(k, (this.pairs.get(k) ?? 0) + 1);
      }
  }

  /** The report over every record replayed so far. */
  report(): BacktestReport & ReplayFigures {
    const fraud = this.ys.filter((y) => y === 1).length;
    const rules: Record<string, ReplayedRule> = {};
    for (const [id, e] of [...this.ruleHits].sort((a, b) => b[1].hits - a[1].hits || (a[0] < b[0] ? -1 : 1)))
      rules[id] = {
        ...e,
        precision: r4(e.labelled === 0 ? 0 : e.fraud / e.labelled),
        recall: r4(fraud === 0 ? 0 : e.fraud / fraud),
      };
    const firingTogether = [...this.pairs]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 20)
      .map(([k, count]) => ({ rules: k.split('\u0000') as unknown as readonly [string, string], count }));
    return {
      decisions: this.replayed.length,
      labelled: this.ys.filter((y) => y !== undefined).length,
      current: metrics(this.logged, this.ys),
      candidate: metrics(this.replayed, this.ys),
      changes: { ...this.changes },
      notReplayable: this.excluded,
      wouldEscalate: this.wouldEscalate,
      lists: this.lists?.report() ?? { recordsWithoutMemberships: 0, currentEntries: [], notReplayed: [] },
      ...(this.candidate.ruleset === undefined || this.candidate.ruleset.signalsUsed.length === 0
        ? {}
        : {
            signals: {
              used: [...this.candidate.ruleset.signalsUsed],
              replayed: [...(this.candidate.replayedSignals?.names ?? [])],
              recordsWithout: this.recordsWithoutSignals,
              notLogged: [...this.signalsNotLogged].sort(),
            },
          }),
      fraudNowCaught: this.fraudNowCaught,
      goodNowBlocked: this.goodNowBlocked,
      goodNowHeld: this.goodNowHeld,
      reviews: {
        current: this.logged.filter((d) => d === 'review').length,
        candidate: this.replayed.filter((d) => d === 'review').length,
      },
      rules,
      firingTogether,
    };
  }
}

/** Replays `records` against the candidate. `labels`: each transaction's resolved label, if any. */
export function backtest(
  records: readonly DecisionRecord[],
  labels: ReadonlyMap<string, 0 | 1>,
  candidate: Candidate,
  excluded: readonly NotReplayable[] = [],
): BacktestReport & ReplayFigures {
  const replay = new BacktestReplay(labels, candidate, excluded);
  replay.add(records);
  return replay.report();
}
