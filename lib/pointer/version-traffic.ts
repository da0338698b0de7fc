/**
 * The pointer state and transitions of a kind whose versions swap as a whole (rulesets, signals): an active version,
 * the earlier ones kept for rollback, and a candidate that serves a canary share of users (stable hash of the
 * userId, the kind's own salt, so the kinds' canaries are independent) and runs off the decision for a shadow share
 * of payments (another salt). Pure; each kind names itself in messages and picks its salts.
 * @module
 */
import { inShare } from '../domain/traffic-share';
import { AppError } from '../errors/errors';
import type { TrafficSplit } from './admin-bodies';

/** Previous versions kept for rollback. */
export const MAX_HISTORY = 10;

/** The pointer state of a version-swapping kind (in the one pointer store; its rejections are kept there beside it). */
export interface VersionState {
  readonly generation: number;
  readonly active: string | undefined;
  /** Earlier active versions, newest first. */
  readonly previous: readonly string[];
  /** The candidate: serves its canary share of users, runs off the decision for its shadow share. */
  readonly traffic: TrafficSplit | undefined;
}

/** The state before anything was published. */
export const EMPTY_VERSION_STATE: VersionState = { generation: 0, active: undefined, previous: [], traffic: undefined };

/** A stored state's JSON text → the state (fields a kind no longer keeps are dropped by the kind's own parse). */
export function parseVersionState(text: string): VersionState {
  const s = JSON.parse(text) as Partial<VersionState>;
  return {
    generation: typeof s.generation === 'number' ? s.generation : 0,
    active: typeof s.active === 'string' ? s.active : undefined,
    previous: Array.isArray(s.previous) ? s.previous.filter((v): v is string => typeof v === 'string') : [],
    traffic: s.traffic ?? undefined,
  };
}

type Next = VersionState | undefined;

/** The transitions and shares of one kind. */
export class VersionTraffic {
  /**
   * @param label how messages name a version of the kind, e.g. `ruleset` ("1.1.0 is already the active ruleset
   *   version").
   * @param canarySalt salt of the canary share (users).
   * @param shadowSalt salt of the shadow share (transactions).
   */
  constructor(
    readonly label: string,
    readonly canarySalt: string,
    readonly shadowSalt: string,
  ) {}

  /** Whether the candidate serves `userId` (the same answer on every instance). */
  inCanary(userId: string, canaryPercent: number): boolean {
    return canaryPercent > 0 && inShare(userId, this.canarySalt, canaryPercent);
  }

  /** Whether the candidate runs in shadow for the payment `transactionId`. */
  inShadow(transactionId: string, shadowPercent: number): boolean {
    return shadowPercent > 0 && inShare(transactionId, this.shadowSalt, shadowPercent);
  }

  /**
   * `version` becomes active; the one before (the pointer's, else the shipped one `serving`) is kept for
   * rollback. A split whose candidate is `version` ends; another candidate's split stays.
   */
  activate(cur: VersionState, version: string, serving: string | undefined): Next {
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
  promoteTo(cur: VersionState, version: string, serving: string | undefined): Next {
    if ((cur.active ?? serving) === version)
      throw new AppError('conflict', `${version} is already the active ${this.label} version.`, {
        errors: [{ path: 'version', message: 'is the active version' }],
      });
    return this.activate(cur, version, serving);
  }

  /** Back to the previous active version; any canary or shadow ends. @throws AppError `conflict` with nothing to go back to. */
  rollBack(cur: VersionState): Next {
    const [prev, ...rest] = cur.previous;
    if (prev === undefined) throw new AppError('conflict', `No previous ${this.label} version to roll back to.`);
    return { ...cur, active: prev, previous: rest, traffic: undefined };
  }

  /**
   * Sets the candidate's shares; both 0 ends the split.
   * @throws AppError `conflict` when the candidate is the active version (`serving` when nothing was published).
   */
  setTraffic(cur: VersionState, split: TrafficSplit, serving: string | undefined): Next {
    if (split.candidate === (cur.active ?? serving))
      throw new AppError('conflict', `${split.candidate} is already the active ${this.label} version.`, {
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
}
