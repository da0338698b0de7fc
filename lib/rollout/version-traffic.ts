/**
 * The pointer state and transitions of a kind whose versions swap as a whole (rulesets, signals): an active version,
 * the earlier ones kept for rollback, and a candidate that serves a canary share of users (stable hash of the
 * userId, the kind's own salt, so the kinds' canaries are independent) and runs off the decision for a shadow share
 * of payments (another salt). The rules are every kind's (`rollout-rules.ts`); each kind names itself in messages and
 * picks its salts. Pure.
 * @module
 */
import { inShare } from '../domain/traffic-share';
import { RolloutMachine, RolloutRules, type RolloutPointers, type TrafficSplit } from './rollout-rules';
import type { ChangeKind, ChangeStamp, LastChange } from './rollout-status';

export { MAX_HISTORY } from './rollout-rules';

/** The pointer state of a version-swapping kind (in the one pointer store; its rejections are kept there beside it). */
export interface VersionState {
  readonly generation: number;
  readonly active: string | undefined;
  /** Earlier active versions, newest first. */
  readonly previous: readonly string[];
  /** The candidate: serves its canary share of users, runs off the decision for its shadow share. */
  readonly traffic: TrafficSplit | undefined;
  /** The last change (absent before the first change that recorded one). */
  readonly lastChange?: LastChange;
  /** Who made each kept version (the active one, the earlier ones) active and when. */
  readonly stamps?: Readonly<Record<string, ChangeStamp>>;
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
    ...(s.lastChange === undefined ? {} : { lastChange: s.lastChange }),
    ...(s.stamps === undefined ? {} : { stamps: s.stamps }),
  };
}

/**
 * `next` (a transition's result from `cur`; `undefined`: no change) with the change recorded: its kind, the version
 * it concerns, who and when; a version published or promoted is stamped with who and when (one back from the history
 * keeps its stamp), and only the kept versions' stamps stay.
 */
export function stamped(
  cur: VersionState,
  next: VersionState | undefined,
  change: { readonly kind: ChangeKind; readonly version: string } & ChangeStamp,
): VersionState | undefined {
  if (next === undefined) return undefined;
  const { by, at } = change;
  const stamps: Record<string, ChangeStamp> = {};
  for (const v of next.previous) {
    const s = cur.stamps?.[v];
    if (s !== undefined) stamps[v] = s;
  }
  if (next.active !== undefined) {
    // a version back from the history (a rollback) keeps who published or promoted it when, as a model pointer does
    const kept = next.active === cur.active || change.kind === 'rollback';
    const s = kept ? cur.stamps?.[next.active] : { by, at };
    if (s !== undefined) stamps[next.active] = s;
  }
  return { ...next, lastChange: { ...change }, stamps };
}

type Next = VersionState | undefined;

/** `cur` with the machine's next pointers, or `undefined` when nothing changes. */
const withPointers = (cur: VersionState, next: RolloutPointers<string> | undefined): Next =>
  next === undefined ? undefined : { ...cur, ...next };

/** The transitions and shares of one kind. */
export class VersionTraffic {
  /** The rules as the kind's messages name them. */
  readonly rules: RolloutRules;
  /** Every kind's state machine, over version strings. */
  private readonly machine: RolloutMachine<string>;

  /**
   * @param label how messages name a version of the kind, e.g. `ruleset`.
   * @param canarySalt salt of the canary share (users).
   * @param shadowSalt salt of the shadow share (transactions).
   * @param route the admin route's segment, e.g. `rulesets`; default `{label}s`.
   */
  constructor(
    readonly label: string,
    readonly canarySalt: string,
    readonly shadowSalt: string,
    route = `${label}s`,
  ) {
    this.rules = new RolloutRules(label, route);
    this.machine = new RolloutMachine(this.rules, (v) => v);
  }

  /** Whether the candidate serves `userId` (the same answer on every instance). */
  inCanary(userId: string, canaryPercent: number): boolean {
    return canaryPercent > 0 && inShare(userId, this.canarySalt, canaryPercent);
  }

  /** Whether the candidate runs in shadow for the payment `transactionId`. */
  inShadow(transactionId: string, shadowPercent: number): boolean {
    return shadowPercent > 0 && inShare(transactionId, this.shadowSalt, shadowPercent);
  }

  /**
   * `version` becomes active (an upload's publication; its newer-than check is the upload's); the one before (the
   * pointer's, else the shipped one `serving`) is kept for rollback. A split whose candidate is `version` ends;
   * another candidate's split stays. The version already active changes nothing.
   */
  activate(cur: VersionState, version: string, serving: string | undefined): Next {
    return withPointers(cur, this.machine.activate(cur, version, serving));
  }

  /**
   * A promote: {@link activate}, refusing the version already active (`serving` when nothing was published) and an
   * older one (roll back instead). @throws AppError `conflict`.
   */
  promoteTo(cur: VersionState, version: string, serving: string | undefined, name = this.label): Next {
    return withPointers(cur, this.machine.promote(name, cur, version, serving));
  }

  /** Back to the previous active version; any canary or shadow ends. @throws AppError `conflict` with nothing to go back to. */
  rollBack(cur: VersionState, name = this.label): Next {
    return withPointers(cur, this.machine.rollBack(name, cur));
  }

  /**
   * Sets the candidate's shares; both 0 ends the split.
   * @throws AppError `conflict` when the candidate is the active version (`serving` when nothing was published).
   */
  setTraffic(cur: VersionState, split: TrafficSplit, serving: string | undefined): Next {
    return withPointers(cur, this.machine.traffic(cur, split, serving));
  }
}
