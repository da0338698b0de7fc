/**
 * The decision beside the score (pure, synchronous). API:
 *
 *   compileRuleset(json) → CompiledRuleset            (`compile-ruleset.ts`; throws AppError `ruleset_invalid`)
 *   evaluateRuleset(compiled, { event, features, velocity, signals?, score, lists, fallbackThresholds })
 *     → { decision, rules, profile, offsets, adjustedScore, escalate, errors }
 *
 * `lists` holds, for each list in `compiled.listsUsed`, whether the event's key field is on it (prefetched).
 * Semantics (docs/decisioning.md):
 * - rules are taken by action in the order allow, block, review, escalate; within one action in ruleset order;
 * - `allow` fires → `approve` and ends evaluation, except `review` with no valid score or after an evaluation
 *   error (fail closed); `block` fires → `decline` and ends evaluation;
 * - otherwise the score plus the profile's offset plus every firing offset decides against the profile's
 *   thresholds; a firing `review` rule makes it at least `review`; a firing `escalate` rule sets `escalate`
 *   (the LLM second opinion, stricter wins);
 * - an expression that throws at run time (or gives a non-bool) does not fire, is recorded in `errors`, and
 *   makes the decision at least `review`.
 */
import { NO_SIGNALS } from '../signals/signals-view';
import { withMemberships, type CelVariables, type ListMemberships } from './cel-environment';
import type { CompiledRule, CompiledRuleset, Profile } from './compile-ruleset';
import type { Action } from './ruleset-schema';

/** What the service recommends doing with a payment. */
export type RuleDecision = 'approve' | 'review' | 'decline';

/** Review and decline thresholds on the (offset) score. */
export interface Thresholds {
  readonly review: number;
  readonly decline: number;
}

/** Everything a ruleset sees for one payment. */
export interface DecisionInput {
  /** The validated payment event. */
  readonly event: Readonly<Record<string, unknown>>;
  /** Derived features by name. */
  readonly features: Readonly<Record<string, number>>;
  /** Velocity counters, already computed. */
  readonly velocity: Readonly<Record<string, number>>;
  /**
   * The payment's signals by name (`signals.<name>`: a view over its signals row, bound for this synchronous
   * evaluation). Absent: none, and a rule reading one fails closed.
   */
  readonly signals?: Readonly<Record<string, number>>;
  /** The model's score in [0, 1], or `null` when it gave no valid score. */
  readonly score: number | null;
  /** Prefetched list memberships of the event's key fields. */
  readonly lists: ListMemberships;
  /** Thresholds of the fallback profile when the ruleset declares no `default` one (the model's). */
  readonly fallbackThresholds: Thresholds;
}

/** A rule that fired. */
export interface FiredRule {
  readonly id: string;
  readonly action: Action;
  readonly description: string;
}

/** The outcome of one evaluation. */
export interface DecisionOutcome {
  readonly decision: RuleDecision;
  /** Rules that fired, in evaluation order. */
  readonly rules: readonly FiredRule[];
  readonly profile: { readonly id: string };
  /** Offsets applied (the profile's is not listed here; it is in `profile`). */
  readonly offsets: readonly { readonly id: string; readonly offset: number }[];
  /** Score + profile offset + firing offsets, clamped to [0, 1]; `null` without a valid score or when a rule decided. */
  readonly adjustedScore: number | null;
  /** Whether an `escalate` rule fired. */
  readonly escalate: boolean;
  /** Expressions that failed at run time (the decision is then at least `review`). */
  readonly errors: readonly { readonly ruleId: string }[];
}

/** The profile of the fallback (`default`) when the ruleset declares none. */
export const FALLBACK_PROFILE_ID = 'default';

const RANK: Readonly<Record<RuleDecision, number>> = { approve: 0, review: 1, decline: 2 };

/** The stricter of two decisions. */
export function stricter(a: RuleDecision, b: RuleDecision): RuleDecision {
  return RANK[a] >= RANK[b] ? a : b;
}

/** Score against thresholds: `>= decline` → decline, `< review` → approve, else review; invalid → review. */
export function thresholdDecision(score: number | null, t: Thresholds): RuleDecision {
  if (score === null || !Number.isFinite(score) || score < 0 || score > 1) return 'review';
  if (score >= t.decline) return 'decline';
  if (score < t.review) return 'approve';
  return 'review';
}

/** The profile for an event: by merchantId, then merchantCategory, then the default. */
export function chooseProfile(
  rs: CompiledRuleset,
  event: Readonly<Record<string, unknown>>,
  fallback: Thresholds,
): Profile {
  const m = event['merchantId'];
  const c = event['merchantCategory'];
  return (
    (typeof m === 'string' ? rs.profilesByMerchant.get(m) : undefined) ??
    (typeof c === 'string' ? rs.profilesByCategory.get(c) : undefined) ??
    rs.defaultProfile ?? { id: FALLBACK_PROFILE_ID, thresholds: fallback, offset: 0 }
  );
}

/** Evaluates a compiled ruleset for one payment. Never throws for an expression's runtime error. */
export function evaluateRuleset(rs: CompiledRuleset, input: DecisionInput): DecisionOutcome {
  return withMemberships(input.lists, () => evaluate(rs, input));
}

function evaluate(rs: CompiledRuleset, input: DecisionInput): DecisionOutcome {
  const profile = chooseProfile(rs, input.event, input.fallbackThresholds);
  const valid = input.score !== null && Number.isFinite(input.score) && input.score >= 0 && input.score <= 1;
  const vars: CelVariables = {
    event: input.event,
    features: input.features,
    velocity: input.velocity,
    signals: input.signals ?? NO_SIGNALS,
    score: valid ? (input.score as number) : Number.NaN,
    has_score: valid,
    profile: {
      id: profile.id,
      review: profile.thresholds.review,
      decline: profile.thresholds.decline,
      offset: profile.offset,
    },
  };
  const errors: { ruleId: string }[] = [];
  const fires = (id: string, when: CompiledRule['when']): boolean => {
    try {
      const v = when(vars);
      if (typeof v === 'boolean') return v;
    } catch {
      /* recorded below: the message may quote event values */
    }
    errors.push({ ruleId: id });
    return false;
  };
  const fired: FiredRule[] = [];
  const first = (action: Action): CompiledRule | undefined => rs.rules[action].find((r) => fires(r.id, r.when));
  const out = (decision: RuleDecision, extra: Partial<DecisionOutcome> = {}): DecisionOutcome => ({
    decision,
    rules: fired,
    profile: { id: profile.id },
    offsets: [],
    adjustedScore: null,
    escalate: false,
    errors,
    ...extra,
  });
  const allow = first('allow');
  if (allow !== undefined) {
    fired.push(describe(allow));
    return out(valid && errors.length === 0 ? 'approve' : 'review');
  }
  const block = first('block');
  if (block !== undefined) {
    fired.push(describe(block));
    return out('decline');
  }
  let floor: RuleDecision = 'approve';
  for (const r of rs.rules.review)
    if (fires(r.id, r.when)) {
      fired.push(describe(r));
      floor = 'review';
    }
  let escalate = false;
  for (const r of rs.rules.escalate)
    if (fires(r.id, r.when)) {
      fired.push(describe(r));
      escalate = true;
    }
  const offsets: { id: string; offset: number }[] = [];
  let total = profile.offset;
  for (const o of rs.offsets)
    if (fires(o.id, o.when)) {
      offsets.push({ id: o.id, offset: o.offset });
      total += o.offset;
    }
  const adjusted = valid ? Math.min(1, Math.max(0, (input.score as number) + total)) : null;
  let decision = stricter(thresholdDecision(adjusted, profile.thresholds), floor);
  if (errors.length > 0) decision = stricter(decision, 'review');
  return out(decision, {
    offsets,
    adjustedScore: adjusted === null ? null : Math.round(adjusted * 1e6) / 1e6,
    escalate,
  });
}

function describe(r: CompiledRule): FiredRule {
  return { id: r.id, action: r.action, description: r.description };
}
