/**
 * The result's account of a review after local scoring (the LLM escalation): who produced the decision, and the
 * `escalation` block. The scorer's result carries them; lib/escalation fills them in.
 */
import type { Decision } from '../domain/decision';

/** Who produced a result: the local model, the local model combined with the LLM, or the local model after a failed/skipped escalation. */
export type ScoreSource = 'local' | 'openai' | 'local-fallback';

/** Why a payment was selected for escalation. */
export type EscalationTrigger = 'band' | 'note' | 'requested' | 'rule';

/**
 * What happened to an escalated payment.
 * - `ok`: the LLM answered with a valid verdict (source `openai`).
 * - `capped`: the share cap was reached; nothing was sent (source `local`).
 * - every other outcome: nothing usable came back, the local result stands (source `local-fallback`):
 *   `breaker_open` (nothing sent), `busy` (too many in flight; nothing sent), `timeout`, `rate_limited` (429),
 *   `server_error` (5xx), `refused` (a refusal or a content filter), `invalid_output` (invalid JSON, schema
 *   violation, empty message, `length` finish), `error` (anything else: connection, 4xx, credentials).
 */
export type EscalationOutcome =
  | 'ok'
  | 'capped'
  | 'breaker_open'
  | 'busy'
  | 'timeout'
  | 'rate_limited'
  | 'server_error'
  | 'refused'
  | 'invalid_output'
  | 'error';

/** The LLM's structured verdict on a payment. */
export interface LlmVerdict {
  readonly riskLevel: 'low' | 'medium' | 'high';
  /** Fraud probability in [0, 1] as the LLM judges it. */
  readonly score: number;
  /** Up to 3 short reasons (each at most 200 characters). */
  readonly reasons: readonly string[];
}

/** The `escalation` block of an escalated payment's result. */
export interface EscalationInfo {
  /** The model that answered (the response's `model`), else the deployment name. */
  readonly model: string;
  readonly outcome: EscalationOutcome;
  /** Time spent on the escalation, ms (0 when nothing was sent). */
  readonly latencyMs: number;
  /** Why the local result stands (fixed text, never payment data); absent when `outcome` is `ok`. */
  readonly reason?: string;
  readonly tokens: { readonly prompt: number; readonly completion: number };
  /** Estimated cost of the call from the configured prices per 1k tokens, USD. */
  readonly costUsd: number;
  /** Why the payment was escalated. */
  readonly triggers: readonly EscalationTrigger[];
  /** The local model's own decision (the response's `decision` is the combined one). */
  readonly localDecision: Decision;
  /** The LLM's verdict and the decision it maps to (only when `outcome` is `ok`). */
  readonly llm?: LlmVerdict & { readonly decision: Decision };
}
