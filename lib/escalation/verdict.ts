import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import type { Decision } from '../domain/decision';
import type { LlmVerdict } from '../scoring/escalation-info';

/**
 * The structured output the LLM must return. Strict structured outputs require every field, so an optional
 * field would be `.nullable()`; this schema has none. String lengths are not in the schema (strict mode
 * does not support `maxLength`): reasons are cut to {@link MAX_REASON_CHARS} after parsing.
 */
export const verdictSchema = z.object({
  riskLevel: z.enum(['low', 'medium', 'high']),
  score: z.number().min(0).max(1),
  reasons: z.array(z.string()).max(3),
});

/** Longest reason kept, characters. */
export const MAX_REASON_CHARS = 200;

/**
 * The `response_format` of the chat call: `openai/helpers/zod`'s `zodResponseFormat`, which supports zod 4
 * (openai ≥ 5.x reads `_zod` schemas), so `chat.completions.parse` validates the answer with zod.
 */
export const verdictFormat = zodResponseFormat(verdictSchema, 'payment_risk_verdict');

/** Maps the LLM's risk level to a decision: low → approve, medium → review, high → decline. */
export function verdictDecision(v: Pick<LlmVerdict, 'riskLevel'>): Decision {
  return v.riskLevel === 'high' ? 'decline' : v.riskLevel === 'medium' ? 'review' : 'approve';
}

/** Normalizes a parsed verdict: reasons trimmed and cut to {@link MAX_REASON_CHARS}. */
export function normalizeVerdict(v: z.infer<typeof verdictSchema>): LlmVerdict {
  return {
    riskLevel: v.riskLevel,
    score: v.score,
    reasons: v.reasons.map((r) => r.trim().slice(0, MAX_REASON_CHARS)),
  };
}
