/**
 * Per-rule analytics over logged decisions joined to labels (the console's rules page; Marble's rule analytics):
 * how often each rule fired, and its precision and recall against the labels that exist.
 */
import type { DecisionRecord } from './decision-record';

/** One rule's figures over a window. */
export interface RuleStat {
  readonly id: string;
  /** Decisions in which the rule fired. */
  readonly fired: number;
  /** Of those, how many have a label (fraud or good). */
  readonly labelled: number;
  /** Of those, how many are labelled fraud. */
  readonly fraud: number;
  /** fraud ÷ labelled; `null` when none of its hits is labelled. */
  readonly precision: number | null;
  /** fraud ÷ every labelled fraud in the window; `null` when the window has no labelled fraud. */
  readonly recall: number | null;
  /** Its hits by the action the rule asked for (`block`, `review`, …). */
  readonly actions: Readonly<Record<string, number>>;
}

/** The rules' figures over a window. */
export interface RuleStats {
  /** Decisions in the window. */
  readonly decisions: number;
  /** Decisions with a label. */
  readonly labelled: number;
  /** Decisions labelled fraud. */
  readonly fraud: number;
  /** One entry per rule that fired or is known, most hits first, then by id. */
  readonly rules: readonly RuleStat[];
}

const ratio = (n: number, d: number): number | null => (d === 0 ? null : Math.round((n / d) * 1e4) / 1e4);

/**
 * The figures of every rule over `records`. `labelOf` gives a transaction's resolved label (1 fraud, 0 good,
 * `undefined` unlabelled); `known` lists rules to report even with no hit (the serving ruleset's).
 */
export function ruleStats(
  records: Iterable<DecisionRecord>,
  labelOf: (transactionId: string) => 0 | 1 | undefined,
  known: Iterable<string> = [],
): RuleStats {
  const byRule = new Map<string, { fired: number; labelled: number; fraud: number; actions: Map<string, number> }>();
  const entry = (id: string) => {
    let e = byRule.get(id);
    if (e === undefined) byRule.set(id, (e = { fired: 0, labelled: 0, fraud: 0, actions: new Map() }));
    return e;
  };
  for (const id of known) entry(id);
  let decisions = 0;
  let labelled = 0;
  let fraud = 0;
  for (const r of records) {
    decisions++;
    const label = labelOf(r.transactionId);
    if (label !== undefined) labelled++;
    if (label === 1) fraud++;
    const seen = new Set<string>();
    for (const rule of r.rules) {
      if (seen.has(rule.id)) continue; // a rule counts once per decision
      seen.add(rule.id);
      const e = entry(rule.id);
      e.fired++;
      e.actions.set(rule.action, (e.actions.get(rule.action) ?? 0) + 1);
      if (label !== undefined) e.labelled++;
      if (label === 1) e.fraud++;
    }
  }
  const rules = [...byRule]
    .map(([id, e]) => ({
      id,
      fired: e.fired,
      labelled: e.labelled,
      fraud: e.fraud,
      precision: ratio(e.fraud, e.labelled),
      recall: ratio(e.fraud, fraud),
      actions: Object.fromEntries(e.actions),
    }))
    .sort((a, b) => b.fired - a.fired || a.id.localeCompare(b.id));
  return { decisions, labelled, fraud, rules };
}
