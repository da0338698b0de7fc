/**
 * Backtest: replays logged decisions against a candidate ruleset and/or model scores, and compares the
 * candidate's decisions with the logged ones: changes by direction, approval rate, precision and recall against
 * the labels. The log holds id fields only as keyed hashes: list rules are replayed by matching hashed entries;
 * a rule that reads a hashed id field (or `note`, never logged) in any other way is reported as not replayable
 * and left out of the replay, never silently.
 */
import type { CompiledRuleset } from '../decisioning/compile-ruleset';
import { evaluateRuleset, thresholdDecision, type Thresholds } from '../decisioning/evaluate-ruleset';
import { HASHED_FIELDS, OMITTED_FIELDS, type DecisionRecord } from './decision-record';
import { HASH_PREFIX, type KeyedHash } from './keyed-hash';

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

/** One side of the comparison. */
export interface SideMetrics {
  readonly approvalRate: number;
  readonly declineRate: number;
  /** Of labelled payments flagged (review or decline), the share that were fraud. */
  readonly precision: number;
  /** Of labelled fraud, the share flagged (review or decline). */
  readonly recall: number;
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
}

/** The candidate to replay. */
export interface Candidate {
  /** Compiled without its not-replayable rules (see {@link notReplayable}). */
  readonly ruleset?: CompiledRuleset;
  /** The candidate model's score per transaction; default the logged score. */
  readonly scores?: ReadonlyMap<string, number>;
  /** Thresholds when no profile applies: the candidate model's, else the current model's. */
  readonly thresholds: Thresholds;
  /**
   * List entries by list name: raw values, hashed here when the list's key field is hashed in the log, or values
   * already hashed with the log's key (`h_…`), kept as they are.
   */
  readonly lists?: Readonly<Record<string, readonly string[]>>;
  readonly hash?: KeyedHash;
}

function metrics(decisions: readonly string[], labels: readonly (0 | 1 | undefined)[]): SideMetrics {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  decisions.forEach((d, i) => {
    const y = labels[i];
    if (y === undefined) return;
    const flagged = d !== 'approve';
    if (flagged && y === 1) tp++;
    else if (flagged) fp++;
    else if (y === 1) fn++;
  });
  const n = Math.max(1, decisions.length);
  const r4 = (v: number): number => Math.round(v * 1e4) / 1e4;
  return {
    approvalRate: r4(decisions.filter((d) => d === 'approve').length / n),
    declineRate: r4(decisions.filter((d) => d === 'decline').length / n),
    precision: r4(tp + fp === 0 ? 0 : tp / (tp + fp)),
    recall: r4(tp + fn === 0 ? 0 : tp / (tp + fn)),
  };
}

/** Replays `records` against the candidate. `labels`: each transaction's resolved label, if any. */
export function backtest(
  records: readonly DecisionRecord[],
  labels: ReadonlyMap<string, 0 | 1>,
  candidate: Candidate,
  excluded: readonly NotReplayable[] = [],
): BacktestReport {
  const hashedEntries = new Map<string, ReadonlySet<string>>();
  const entries = (name: string, hashed: boolean): ReadonlySet<string> => {
    const key = `${name}|${hashed}`;
    let s = hashedEntries.get(key);
    if (s === undefined) {
      const raw = candidate.lists?.[name] ?? [];
      // an entry already in hashed form (`h_…`, e.g. exported from the log's side) is kept as it is
      const h = candidate.hash;
      s = new Set(hashed && h !== undefined ? raw.map((v) => (v.startsWith(HASH_PREFIX) ? v : h.of(v))) : raw);
      hashedEntries.set(key, s);
    }
    return s;
  };
  const changes: Record<string, number> = {};
  const cand: string[] = [];
  let wouldEscalate = 0;
  for (const r of records) {
    const score = candidate.scores?.get(r.transactionId) ?? r.score;
    let decision: string;
    if (candidate.ruleset !== undefined) {
      const lists = new Map(
        candidate.ruleset.listsUsed.map((u) => {
          const v = r.event[u.key];
          return [u.name, typeof v === 'string' && entries(u.name, r.hashed.includes(u.key)).has(v)] as const;
        }),
      );
      const out = evaluateRuleset(candidate.ruleset, {
        event: r.event,
        features: r.features,
        velocity: r.velocity as unknown as Readonly<Record<string, number>>,
        score,
        lists,
        fallbackThresholds: candidate.thresholds,
      });
      decision = out.decision;
      if (out.escalate) wouldEscalate++;
    } else decision = thresholdDecision(score, candidate.thresholds);
    cand.push(decision);
    if (decision !== r.decision) {
      const k = `${r.decision}→${decision}`;
      changes[k] = (changes[k] ?? 0) + 1;
    }
  }
  const ys = records.map((r) => labels.get(r.transactionId));
  return {
    decisions: records.length,
    labelled: ys.filter((y) => y !== undefined).length,
    current: metrics(
      records.map((r) => r.decision),
      ys,
    ),
    candidate: metrics(cand, ys),
    changes,
    notReplayable: excluded,
    wouldEscalate,
  };
}
