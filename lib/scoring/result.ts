import type { CacheStatus } from '../context/context-provider';
import type { Decision } from '../domain/decision';
import type { PaymentEvent } from '../domain/payment-event';
import type { RunTiming } from '../inference/backend';
import type { ModelManifest } from '../models/manifest';
import type { RulesetDecision } from '../decisioning/decisioning';
import type { Action } from '../decisioning/ruleset-schema';
import { decide, MODEL_OUTPUT_INVALID_REASON, topReasons, type Reason } from './decision';
import type { EscalationInfo, ScoreSource } from './escalation-info';

/** The result of scoring one payment (HTTP 200 body; Service Bus result body). */
export interface ScoreResult {
  readonly transactionId: string;
  /**
   * Fraud probability in [0, 1], rounded to 6 decimals; `null` when the model gave no valid score (then
   * `decision` is `review` and the only reason is `model_output_invalid`: fail closed).
   */
  readonly score: number | null;
  readonly decision: Decision;
  readonly reasons: readonly Reason[];
  readonly model: { readonly name: string; readonly version: string };
  /**
   * Who produced the decision: the local ONNX model (`local`), the local model combined with an LLM verdict
   * (`openai`), or the local model after an escalation failed or was skipped (`local-fallback`).
   */
  readonly source: ScoreSource;
  /** Present on escalated payments only (docs/escalation.md). */
  readonly escalation?: EscalationInfo;
  /** How the user context was obtained. */
  readonly cache: CacheStatus;
  readonly timing: RunTiming;
  /** The rules that fired (with a ruleset; docs/decisioning.md). */
  readonly rules?: readonly { readonly id: string; readonly action: Action }[];
  /** The ruleset that decided. */
  readonly ruleset?: { readonly name: string; readonly version: string };
  /** The merchant profile whose thresholds applied. */
  readonly profile?: { readonly id: string };
  /** Rules whose expression failed at run time (the decision failed closed to at least review). */
  readonly ruleErrors?: readonly string[];
}

/** The result stage: the response body of one locally scored payment (`score` NaN: no valid score). */
export function toResult(
  event: PaymentEvent,
  row: Float32Array,
  score: number,
  manifest: ModelManifest,
  cache: CacheStatus,
  timing: RunTiming,
  rules?: RulesetDecision,
): ScoreResult {
  const valid = Number.isFinite(score); // `checked` turned every invalid score into NaN
  const reasons = valid ? topReasons(row, manifest) : [MODEL_OUTPUT_INVALID_REASON];
  const result: ScoreResult = {
    transactionId: event.transactionId,
    score: valid ? Math.round(score * 1e6) / 1e6 : null,
    decision: decide(score, manifest.thresholds),
    reasons,
    model: { name: manifest.name, version: manifest.version },
    source: 'local',
    cache,
    timing,
  };
  if (rules === undefined) return result;
  return {
    ...result,
    decision: rules.decision,
    // the model's reasons first (model_output_invalid stays first when the score is invalid), then the fired rules
    reasons: [
      ...reasons,
      ...rules.rules.map((r) => ({ code: `rule:${r.id}`, contribution: 0, description: r.description })),
    ],
    rules: rules.rules.map((r) => ({ id: r.id, action: r.action })),
    ruleset: rules.ruleset,
    profile: rules.profile,
    ...(rules.errors.length === 0 ? {} : { ruleErrors: rules.errors.map((e) => e.ruleId) }),
  };
}
