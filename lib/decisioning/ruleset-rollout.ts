/**
 * Ruleset rollout: the ruleset kind of the one rollout of whole documents (`lib/rollout/document-rollout.ts`). An
 * upload (`rulesets/{name}/{version}.json`, blob trigger) is checked (schema, compile with the rule id and column of
 * what does not compile, golden cases, a signal the rules read that the serving signals lack, newer than the active
 * version) and, if good, published as the pointer's active version; every instance swaps its {@link Decisioning}.
 * Admin: status, promote, rollback, traffic (canary and shadow), with every kind's bodies and rules.
 */
import type { DocumentSpec } from '../rollout/document-kind';
import { DocumentRollout, type DocumentRolloutDeps, type DocumentStatus } from '../rollout/document-rollout';
import type { PointerStore } from '../rollout/pointer-store';
import type { Logger } from '../platform/logger';
import type { Timers } from '../platform/timers';
import type { CompiledRuleset, ServingSignals } from './compile-ruleset';
import type { Decisioning, ShadowReport } from './decisioning';
import { RULESET_LAYOUT, type RulesetRepository } from './ruleset-repository';
import { RULESET_BODIES, RULESET_TRAFFIC, type RulesetState } from './ruleset-traffic';
import { compileRulesetText } from './ruleset-upload';

export { GOLDEN_THRESHOLDS } from './ruleset-upload';
export { RETRY_FIRST_MS, RETRY_MAX_MS } from '../rollout/document-rollout';

/** Dependencies of a {@link RulesetRollout}. */
export interface RulesetRolloutDeps {
  readonly name: string;
  readonly decisioning: Decisioning;
  readonly store: PointerStore<RulesetState>;
  readonly repository: RulesetRepository;
  readonly timers: Timers;
  readonly reconcileMs: number;
  /** Wall clock, epoch ms. */
  readonly wallNow?: () => number;
  /** This instance, as rejections and changes name it. Default `{host}-{pid}`. */
  readonly instanceId?: string;
  /** Default silent. */
  readonly logger?: Logger;
  /** The signals version serving beside the rules: an upload reading a signal it lacks is refused. */
  readonly servingSignals?: () => ServingSignals | undefined;
  readonly on?: DocumentRolloutDeps<CompiledRuleset>['on'];
}

/** The admin view (`GET /api/rulesets/{name}`): every whole-document kind's, with the ruleset's shadow counts. */
export type RulesetStatus = DocumentStatus<ShadowReport>;

/** The ruleset kind: what it supplies to the one rollout. */
export function rulesetSpec(
  name: string,
  servingSignals?: () => ServingSignals | undefined,
): DocumentSpec<CompiledRuleset> {
  return {
    kind: 'ruleset',
    name,
    layout: RULESET_LAYOUT,
    invalidCode: 'ruleset_invalid',
    traffic: RULESET_TRAFFIC,
    bodies: RULESET_BODIES,
    compile: (text, ref, source, upload) =>
      compileRulesetText(text, ref, source, upload ? servingSignals?.() : undefined),
  };
}

/** Ruleset rollout on one instance. */
export class RulesetRollout extends DocumentRollout<CompiledRuleset, ShadowReport> {
  constructor(deps: RulesetRolloutDeps) {
    const d = deps.decisioning;
    super({
      ...deps,
      spec: rulesetSpec(deps.name, deps.servingSignals),
      target: {
        serving: () => d.ruleset?.version,
        candidate: () => d.candidate?.version,
        swap: (rs) => {
          const before = d.ruleset;
          d.swap(rs);
          return before !== rs;
        },
        setCandidate: (rs, split) => d.setCandidate(rs, split),
        shadow: () => d.shadowReport(),
      },
    });
  }
}
