/**
 * The ruleset's traffic split and pointer transitions: a candidate version serves a canary share of users
 * (stable hash of the userId, the same function as the model canary, its own salt so the two canaries are
 * independent) and is evaluated off the decision for a shadow share of payments. Admin bodies are checked
 * strictly (every invalid field named). Pure.
 */
import { z } from 'zod';
import { inShare } from '../domain/traffic-share';
import { AppError } from '../errors/errors';
import { parseBody } from '../errors/parse-body';
import { MAX_HISTORY, type RulesetState, type RulesetTraffic } from './ruleset-pointer';

export type { RulesetTraffic } from './ruleset-pointer';

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

const version = z
  .string({ error: 'must be a version string like 1.1.0' })
  .min(1, { error: 'must not be empty' })
  .max(64, { error: 'must be at most 64 characters' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { error: 'must be a version like 1.1.0' });
const percent = z
  .number({ error: 'must be a number from 0 to 100' })
  .min(0, { error: 'must be at least 0' })
  .max(100, { error: 'must be at most 100' });
const versionBody = z.strictObject({ version }, { error: 'must be an object like { "version": "1.1.0" }' });
const trafficBody = z.strictObject(
  { candidate: version, canaryPercent: percent.default(0), shadowPercent: percent.default(0) },
  { error: 'must be an object like { "candidate": "1.1.0", "canaryPercent": 10, "shadowPercent": 0 }' },
);

/** `{ "version" }` of a promote. @throws AppError `validation_failed` naming every invalid field. */
export function parseVersionBody(body: unknown): string {
  return parseBody(versionBody, body).version;
}

/** `{ candidate, canaryPercent?, shadowPercent? }`. @throws AppError `validation_failed` naming every invalid field. */
export function parseTrafficBody(body: unknown): RulesetTraffic {
  return parseBody(trafficBody, body);
}

type Next = Omit<RulesetState, 'generation'> | undefined;

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
