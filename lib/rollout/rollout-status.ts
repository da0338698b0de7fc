/**
 * The one status view of every artifact kind (models, rulesets, signals): what `GET /api/{kind}/{name}` and every
 * admin change answer. The same core fields with the same names and meanings for every kind (the pointer's
 * generation, what this instance serves, the active version and who made it active when, the candidate and its
 * shares, what a rollback goes back to, the last change, the last refused uploads, the shadow figures); what only
 * one kind has goes in one named field of its own (the model's `fleet`). {@link rolloutStatus} builds the core from
 * a kind's pointer state. Pure.
 * @module
 */
import type { Rejection } from './pointer-store';
import type { TrafficSplit } from './rollout-rules';

/** Who made a change (the instance that applied it) and when (ISO 8601). */
export interface ChangeStamp {
  readonly by: string;
  readonly at: string;
}

/** The kinds of change to a pointer. */
export type ChangeKind = 'publish' | 'promote' | 'rollback' | 'traffic';

/** The last change of a pointer: its kind, the version it concerns (the candidate, for a traffic change), who, when. */
export interface LastChange extends ChangeStamp {
  readonly kind: ChangeKind;
  readonly version: string;
}

/** A version as the status shows it: who made it active and when (absent when unknown, e.g. the shipped version). */
export interface VersionView {
  readonly version: string;
  readonly by?: string;
  readonly at?: string;
}

/** The candidate and its shares (percent, 0–100): canary of users, shadow of requests. */
export interface CandidateView {
  readonly version: string;
  readonly canaryPercent: number;
  readonly shadowPercent: number;
}

/** The core of every kind's status view. */
export interface RolloutCore<S extends object = object> {
  readonly name: string;
  /** The pointer's generation (0: nothing published yet; the shipped version serves). */
  readonly generation: number;
  /** The version this instance serves. */
  readonly serving: string | undefined;
  /** The candidate loaded on this instance, if any. */
  readonly servingCandidate: string | undefined;
  /** The pointer's active version (every instance serves it). */
  readonly active: VersionView | undefined;
  /** The pointer's candidate and its shares, while one is set. */
  readonly candidate: CandidateView | undefined;
  /** What a rollback goes back to (the first of {@link history}). */
  readonly previous: VersionView | undefined;
  /** Earlier active versions, newest first. */
  readonly history: readonly VersionView[];
  readonly lastChange: LastChange | undefined;
  /** The last refused uploads, newest first. */
  readonly rejections: readonly Rejection[];
  /** The candidate's shadow figures (each kind's report), when there are any. */
  readonly shadow?: S;
}

/** A kind's status view: the core, and `X`, the kind's one field of its own (e.g. `{ fleet }`). */
export type RolloutStatus<S extends object = object, X extends object = object> = RolloutCore<S> & X;

/** What {@link rolloutStatus} builds the core from: a kind's pointer state, read as every kind's. */
export interface StatusSource<S extends object> {
  readonly name: string;
  readonly generation: number;
  readonly serving: string | undefined;
  readonly servingCandidate: string | undefined;
  readonly active: VersionView | undefined;
  /** Earlier active versions, newest first. */
  readonly previous: readonly VersionView[];
  readonly traffic: TrafficSplit | undefined;
  readonly lastChange: LastChange | undefined;
  readonly rejections: readonly Rejection[];
  readonly shadow: S | undefined;
}

/** A version with who made it active and when, when known. */
export function versionView(version: string, stamp: ChangeStamp | undefined): VersionView {
  return stamp === undefined ? { version } : { version, by: stamp.by, at: stamp.at };
}

/** The status view of `src`, with the kind's own field `extra`. */
export function rolloutStatus<S extends object, X extends object = object>(
  src: StatusSource<S>,
  extra: X = {} as X,
): RolloutStatus<S, X> {
  const t = src.traffic;
  const core: RolloutCore<S> = {
    name: src.name,
    generation: src.generation,
    serving: src.serving,
    servingCandidate: src.servingCandidate,
    active: src.active,
    candidate:
      t === undefined
        ? undefined
        : { version: t.candidate, canaryPercent: t.canaryPercent, shadowPercent: t.shadowPercent },
    previous: src.previous[0],
    history: [...src.previous],
    lastChange: src.lastChange,
    rejections: [...src.rejections],
    ...(src.shadow === undefined ? {} : { shadow: src.shadow }),
  };
  return { ...core, ...extra };
}
