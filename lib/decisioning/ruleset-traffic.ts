/**
 * The ruleset's traffic split and pointer transitions: a candidate version serves a canary share of users
 * (stable hash of the userId, the same function as the model canary, its own salt so the two canaries are
 * independent) and is evaluated off the decision for a shadow share of payments. The transitions and their rules are
 * every kind's (`lib/rollout/version-traffic.ts`, `lib/rollout/rollout-rules.ts`); admin bodies are checked strictly
 * (every invalid field named). Pure.
 */
import { AdminBodies, type TrafficSplit } from '../rollout/admin-bodies';
import { VersionTraffic, type VersionState } from '../rollout/version-traffic';

export { MAX_HISTORY } from '../rollout/version-traffic';

/** A candidate version and its shares (percent, 0–100): canary of users, shadow of payments. */
export type RulesetTraffic = TrafficSplit;

/** The ruleset kind's pointer state (in the one pointer store; its rejections are kept there beside it). */
export type RulesetState = VersionState;

/** The state before anything was published. */
export const EMPTY_STATE: RulesetState = { generation: 0, active: undefined, previous: [], traffic: undefined };

/**
 * A stored state's JSON text → the state: a state written before canaries had `shadow: version` (evaluated on every
 * payment), and one written before rejections moved beside the pointer kept them in it.
 */
export function parseRulesetState(text: string): RulesetState {
  const { shadow, rejections: _r, ...s } = JSON.parse(text) as RulesetState & { shadow?: string; rejections?: unknown };
  const traffic =
    s.traffic ?? (shadow === undefined ? undefined : { candidate: shadow, canaryPercent: 0, shadowPercent: 100 });
  return { ...s, traffic };
}

/** Salt of the ruleset canary (users) and shadow (transactions) shares. */
export const CANARY_SALT = 'ruleset-canary';
export const SHADOW_SALT = 'ruleset-shadow';

/** The ruleset kind's transitions and shares. */
export const RULESET_TRAFFIC = new VersionTraffic('ruleset', CANARY_SALT, SHADOW_SALT);

/** Whether the candidate decides for `userId` (the same answer on every instance). */
export function inRulesetCanary(userId: string, canaryPercent: number): boolean {
  return RULESET_TRAFFIC.inCanary(userId, canaryPercent);
}

/** Whether the candidate is evaluated in shadow for the payment `transactionId`. */
export function inRulesetShadow(transactionId: string, shadowPercent: number): boolean {
  return RULESET_TRAFFIC.inShadow(transactionId, shadowPercent);
}

/** The admin bodies of rulesets (the same parsing as every kind's; versions like `1.1.0`). */
export const RULESET_BODIES = new AdminBodies(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, '1.1.0');

/** `{ "version" }` of a promote. @throws AppError `validation_failed` naming every invalid field. */
export function parseVersionBody(body: unknown): string {
  return RULESET_BODIES.version(body);
}

/** `{ candidate, canaryPercent?, shadowPercent? }`. @throws AppError `validation_failed` naming every invalid field. */
export function parseTrafficBody(body: unknown): RulesetTraffic {
  return RULESET_BODIES.traffic(body);
}

type Next = RulesetState | undefined;

/**
 * `version` becomes active; the one before (the pointer's, else the shipped one `serving`) is kept for
 * rollback. A split whose candidate is `version` ends (as for models); another candidate's split stays.
 */
export function activate(cur: RulesetState, version: string, serving: string | undefined): Next {
  return RULESET_TRAFFIC.activate(cur, version, serving);
}

/**
 * A promote: {@link activate}, refusing the version already active (`serving` when nothing was published) and an
 * older one (roll back instead). @throws AppError `conflict`.
 */
export function promoteTo(cur: RulesetState, version: string, serving: string | undefined): Next {
  return RULESET_TRAFFIC.promoteTo(cur, version, serving);
}
