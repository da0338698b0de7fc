/**
 * The ruleset's traffic split and pointer transitions: a candidate version serves a canary share of users
 * (stable hash of the userId, the same function as the model canary, its own salt so the two canaries are
 * independent) and is evaluated off the decision for a shadow share of payments. Admin bodies are checked
 * strictly (every invalid field named). Pure.
 */
import { inShare } from '../domain/traffic-share';
import { AppError } from '../errors/errors';
import { AdminBodies, type TrafficSplit } from '../pointer/admin-bodies';

/** Previous versions kept for rollback. */
export const MAX_HISTORY = 10;

/** A candidate version and its shares (percent, 0–100): canary of users, shadow of payments. */
export type RulesetTraffic = TrafficSplit;

/** The ruleset kind's pointer state (in the one pointer store; its rejections are kept there beside it). */
export interface RulesetState {
  readonly generation: number;
  readonly active: string | undefined;
  /** Earlier active versions, newest first. */
  readonly previous: readonly string[];
  /** The candidate: decides for its canary share of users, evaluated off the decision for its shadow share. */
  readonly traffic: RulesetTraffic | undefined;
}

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

/** Whether the candidate decides for `userId` (the same answer on every instance). */
export function inRulesetCanary(userId: string, canaryPercent: number): boolean {
  return canaryPercent > 0 && inShare(userId, CANARY_SALT, canaryPercent);
}

/** Whether the candidate is evaluated in shadow for the payment `transactionId`. */
export function inRulesetShadow(transactionId: string, shadowPercent: number): boolean {
  return shadowPercent > 0 && inShare(transactionId, SHADOW_SALT, shadowPercent);
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
  if ((cur.active ?? serving) === version) return undefined; // never its own previous version
  const before = cur.active ?? serving;
  const previous = before === undefined ? cur.previous : [before, ...cur.previous].slice(0, MAX_HISTORY);
  const traffic = cur.traffic?.candidate === version ? undefined : cur.traffic;
  return { ...cur, active: version, previous, traffic };
}

/**
 * A promote: {@link activate}, refusing the version already active (`serving` when nothing was published), which
 * would change nothing and leave nothing to roll back to. @throws AppError `conflict`.
 */
export function promoteTo(cur: RulesetState, version: string, serving: string | undefined): Next {
  if ((cur.active ?? serving) === version)
    throw new AppError('conflict', `${version} is already the active ruleset version.`, {
      errors: [{ path: 'version', message: 'is the active version' }],
    });
  return activate(cur, version, serving);
}

/** Back to the previous active version; any canary or shadow ends. @throws AppError `conflict` with nothing to go back to. */
export function rollBack(cur: RulesetState): Next {
  const [prev, ...rest] = cur.previous;
  if (prev === undefined) throw new AppError('conflict', 'No previous ruleset version to roll back to.');
  return { ...cur, active: prev, previous: rest, traffic: undefined };
}

/**
 * Sets the candidate's shares; both 0 ends the split.
 * @throws AppError `conflict` when the candidate is the active version (`serving` when nothing was published).
 */
export function setTraffic(cur: RulesetState, split: RulesetTraffic, serving: string | undefined): Next {
  if (split.candidate === (cur.active ?? serving))
    throw new AppError('conflict', `${split.candidate} is already the active ruleset version.`, {
      errors: [{ path: 'candidate', message: 'is the active version' }],
    });
  const off = split.canaryPercent === 0 && split.shadowPercent === 0;
  const t = cur.traffic;
  if (off) return t === undefined ? undefined : { ...cur, traffic: undefined };
  const same =
    t !== undefined &&
    t.candidate === split.candidate &&
    t.canaryPercent === split.canaryPercent &&
    t.shadowPercent === split.shadowPercent;
  return same ? undefined : { ...cur, traffic: { ...split } };
}
