/**
 * The one set of rollout rules of every artifact kind (models, rulesets, signals): newer-than (an upload must be newer
 * than the active version), promote (never the active version, never an older one: that is a rollback), rollback (to
 * the previous active version, ending any canary or shadow), the history kept for rollback, and the candidate's
 * traffic split (canary of users, shadow of requests; both 0 end it; a split whose candidate becomes active ends).
 * Each kind's pointer state (`lib/model-rollout/fleet-state.ts` for models, `version-traffic.ts` for whole documents)
 * applies these; nothing here knows a kind but by its label. Pure.
 * @module
 */
import { AppError, type ErrorCode } from '../errors/errors';
import { compareVersions } from '../models/model-folder';

/** Earlier active versions kept for rollback, every kind. */
export const MAX_HISTORY = 10;

/** A candidate version and its shares (percent, 0–100): canary of users, shadow of requests. */
export interface TrafficSplit {
  readonly candidate: string;
  readonly canaryPercent: number;
  readonly shadowPercent: number;
}

/** The rules, as one kind's messages name them. */
export class RolloutRules {
  /**
   * @param label how messages name a version of the kind, e.g. `ruleset`.
   * @param route the admin route's segment, e.g. `rulesets` (`POST /api/rulesets/{name}/rollback`).
   */
  constructor(
    readonly label: string,
    readonly route: string,
  ) {}

  /** Newer-than: the refusal of an upload of `version` while `active` serves (`code`: the kind's), or none. */
  notNewer(version: string, active: string | undefined, code: ErrorCode): AppError | undefined {
    if (active === undefined || compareVersions(version, active) > 0) return undefined;
    return new AppError(
      code,
      `Version ${version} is not newer than the active version ${active}; use a higher version, or roll back explicitly.`,
      { transient: false, errors: [{ path: 'version', message: `must be newer than ${active}` }] },
    );
  }

  /**
   * A promote of `version` while `active` serves: never the active version (it would change nothing and leave itself
   * as its own previous version), never an older one (a rollback). @throws AppError `conflict` naming `version`.
   */
  checkPromote(name: string, version: string, active: string | undefined): void {
    if (version === active) throw this.isActive(version, 'version');
    if (active !== undefined && compareVersions(version, active) < 0)
      throw new AppError(
        'conflict',
        `Version ${version} is older than the active version ${active}; use POST /api/${this.route}/${name}/rollback.`,
        { transient: false, errors: [{ path: 'version', message: `must be newer than ${active}` }] },
      );
  }

  /** A candidate is never the active version. @throws AppError `conflict` naming `candidate`. */
  checkCandidate(candidate: string, active: string | undefined): void {
    if (candidate === active) throw this.isActive(candidate, 'candidate');
  }

  /** The refusal of a rollback with nothing to go back to. */
  noPrevious(name: string): AppError {
    return new AppError('conflict', `No previous ${this.label} version of ${name} to roll back to.`, {
      transient: false,
    });
  }

  private isActive(version: string, path: string): AppError {
    return new AppError(
      'conflict',
      `${version} is already the active version; it is the ${this.label} version every instance serves.`,
      { transient: false, errors: [{ path, message: 'is the active version' }] },
    );
  }
}

/** The history after `before` stops being active: it first, at most {@link MAX_HISTORY}. */
export function pushHistory<T>(before: T | undefined, previous: readonly T[]): T[] {
  return before === undefined ? [...previous] : [before, ...previous].slice(0, MAX_HISTORY);
}

/** The split after `version` becomes active: the one whose candidate it is ends; another stays. */
export function splitAfterActivate(traffic: TrafficSplit | undefined, version: string): TrafficSplit | undefined {
  return traffic?.candidate === version ? undefined : traffic;
}

/**
 * The split after a traffic change to `split`: both shares 0 end it; `'unchanged'` when it changes nothing (the same
 * split again, or ending none).
 */
export function nextSplit(
  current: TrafficSplit | undefined,
  split: TrafficSplit,
): { readonly traffic: TrafficSplit | undefined } | 'unchanged' {
  const off = split.canaryPercent === 0 && split.shadowPercent === 0;
  if (off) return current === undefined ? 'unchanged' : { traffic: undefined };
  const same =
    current !== undefined &&
    current.candidate === split.candidate &&
    current.canaryPercent === split.canaryPercent &&
    current.shadowPercent === split.shadowPercent;
  const { candidate, canaryPercent, shadowPercent } = split;
  return same ? 'unchanged' : { traffic: { candidate, canaryPercent, shadowPercent } };
}

/** What every kind's pointer state holds, whatever it keeps of a version (`P`: a version string, a model pointer). */
export interface RolloutPointers<P> {
  readonly active: P | undefined;
  /** Earlier active versions, newest first (what a rollback goes back to). */
  readonly previous: readonly P[];
  /** The candidate and its shares, while one is set. */
  readonly traffic: TrafficSplit | undefined;
}

/**
 * The one state machine of every kind: publish (activate), promote, rollback and traffic over
 * {@link RolloutPointers}, applying {@link RolloutRules}. Each returns the next pointers, or `undefined` when
 * nothing changes; a kind keeps the rest of its state around them. Pure.
 */
export class RolloutMachine<P> {
  /**
   * @param rules the rules as the kind's messages name them.
   * @param versionOf the version of what the kind keeps of a version.
   */
  constructor(
    readonly rules: RolloutRules,
    private readonly versionOf: (p: P) => string,
  ) {}

  private version(p: P | undefined): string | undefined {
    return p === undefined ? undefined : this.versionOf(p);
  }

  /**
   * `next` becomes active (a publication: its newer-than check is the upload's); the one before (the pointers', else
   * `serving`, what serves while nothing was published) is kept for rollback. A split whose candidate is `next` ends;
   * another stays. `next` already active changes nothing (never its own previous version).
   */
  activate(cur: RolloutPointers<P>, next: P, serving?: P): RolloutPointers<P> | undefined {
    const before = cur.active ?? serving;
    const version = this.versionOf(next);
    if (this.version(before) === version) return undefined;
    return {
      active: next,
      previous: pushHistory(before, cur.previous),
      traffic: splitAfterActivate(cur.traffic, version),
    };
  }

  /** A promote: {@link activate} of a version newer than the active one. @throws AppError `conflict` (see {@link RolloutRules.checkPromote}). */
  promote(name: string, cur: RolloutPointers<P>, next: P, serving?: P): RolloutPointers<P> | undefined {
    this.rules.checkPromote(name, this.versionOf(next), this.version(cur.active ?? serving));
    return this.activate(cur, next, serving);
  }

  /** Back to the previous active version; any canary or shadow ends. @throws AppError `conflict` with nothing to go back to. */
  rollBack(name: string, cur: RolloutPointers<P>): RolloutPointers<P> {
    const [back, ...older] = cur.previous;
    if (back === undefined) throw this.rules.noPrevious(name);
    return { active: back, previous: older, traffic: undefined };
  }

  /**
   * The candidate's shares (see {@link nextSplit}); `undefined` when nothing changes.
   * @throws AppError `conflict` when the candidate is the active version (`serving` while nothing was published).
   */
  traffic(cur: RolloutPointers<P>, split: TrafficSplit, serving?: P): RolloutPointers<P> | undefined {
    this.rules.checkCandidate(split.candidate, this.version(cur.active ?? serving));
    const next = nextSplit(cur.traffic, split);
    return next === 'unchanged' ? undefined : { ...cur, traffic: next.traffic };
  }
}
