import type { Decision } from '../domain/decision';

const RANK: Record<Decision, number> = { approve: 0, review: 1, decline: 2 };

/**
 * The combination rule: the stricter decision wins (approve < review < decline). The LLM can only make a
 * decision stricter, never looser, so an LLM answer never approves what the local model flagged.
 */
export function combineDecisions(local: Decision, llm: Decision): Decision {
  return RANK[llm] > RANK[local] ? llm : local;
}
