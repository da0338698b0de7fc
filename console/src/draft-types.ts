/** The shapes of the rule-change routes as the draft pages read them (docs/governance.md): the generated ones. */
import { call } from './api.js';
import type { ServingRuleset } from './api-contract.js';

export type { BacktestReport, DiffLine, Draft, DraftBacktest, DraftDiff } from './api-contract.js';

/** The serving ruleset: its name, version and document. */
export function serving(): Promise<ServingRuleset> {
  return call('insightsRuleset');
}
