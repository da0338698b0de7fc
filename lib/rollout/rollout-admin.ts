/**
 * The one admin of every artifact kind (models, rulesets, signals): status, promote, rollback and traffic over the
 * kind's pointer, each change stamped with this instance and the time, applied to the pointer store atomically,
 * followed by this instance, and answered with the kind's status view (`rollout-status.ts`). A kind supplies an
 * {@link AdminKind}: its bodies, the name it serves, its pointer state's transitions (every kind's state machine,
 * `rollout-rules.ts`), what a version must pass before it may serve, and its status view.
 * @module
 */
import type { ArtifactAdmin } from '../http/admin-routes';
import type { AdminBodies } from './admin-bodies';
import type { TrafficSplit } from './rollout-rules';
import type { ChangeStamp } from './rollout-status';

/** What a kind supplies to its {@link RolloutAdmin} (`S`: its pointer state; `V`: its status view). */
export interface AdminKind<S, V> {
  /** The kind's request bodies (its version pattern). */
  readonly bodies: AdminBodies;
  /** @throws AppError `not_found` for a name this app does not serve. */
  checkName(name: string): void;
  /** The pointer of `name`, if any was written. */
  read(name: string): Promise<S | undefined>;
  /** Applies `fn` to the pointer atomically (`undefined`: no change). */
  update(name: string, fn: (cur: S | undefined) => S | undefined): Promise<unknown>;
  /** A promote of `version`. @throws AppError (`conflict`, `not_found`, …) when refused. */
  promote(cur: S | undefined, version: string, name: string, stamp: ChangeStamp): S | undefined;
  /** Back to the previous active version. @throws AppError `conflict` with nothing to go back to. */
  rollback(cur: S | undefined, name: string, stamp: ChangeStamp): S | undefined;
  /** The candidate's shares. @throws AppError when refused. */
  traffic(cur: S | undefined, split: TrafficSplit, name: string, stamp: ChangeStamp): S | undefined;
  /** What a rollback of `cur` goes back to. */
  previousOf(cur: S | undefined): string | undefined;
  /**
   * Refuses a version that may not serve, before anything is written (the promoted version, a candidate given a
   * share, the version a rollback goes back to). Default none.
   */
  admit?(version: string, change: 'promote' | 'rollback' | 'traffic'): Promise<void>;
  /** Follows the pointer on this instance now. */
  converge(): Promise<void>;
  /** The status view of `name` (`GET /api/{kind}/{name}`). */
  status(name: string): Promise<V>;
}

/** Dependencies of a {@link RolloutAdmin}. */
export interface RolloutAdminDeps<S, V> {
  readonly kind: AdminKind<S, V>;
  /** This instance, as the pointer's last change names it. */
  readonly instanceId: string;
  /** Wall clock, epoch ms. */
  readonly wallNow: () => number;
}

/** The admin of one kind. */
export class RolloutAdmin<S, V> implements ArtifactAdmin {
  constructor(private readonly d: RolloutAdminDeps<S, V>) {}

  private stamp(): ChangeStamp {
    return { by: this.d.instanceId, at: new Date(this.d.wallNow()).toISOString() };
  }

  /** Applies a transition to the pointer, follows it here and answers the status. */
  private async change(name: string, fn: (cur: S | undefined, stamp: ChangeStamp) => S | undefined): Promise<V> {
    const { kind } = this.d;
    const stamp = this.stamp();
    await kind.update(name, (cur) => fn(cur, stamp));
    await kind.converge();
    return kind.status(name);
  }

  /** `GET …/{name}`. @throws AppError `not_found` for a name not served here. */
  async status(name: string): Promise<V> {
    this.d.kind.checkName(name);
    return this.d.kind.status(name);
  }

  /**
   * `POST …/{name}/promote { version }`: the version becomes active on every instance (a split whose candidate it is
   * ends). @throws AppError `validation_failed`, `not_found`, `conflict` (the active version, or an older one), the
   * kind's refusal of a version that may not serve.
   */
  async promote(name: string, body: unknown): Promise<V> {
    const { kind } = this.d;
    kind.checkName(name);
    const version = kind.bodies.version(body);
    await kind.admit?.(version, 'promote');
    return this.change(name, (cur, stamp) => kind.promote(cur, version, name, stamp));
  }

  /**
   * `POST …/{name}/rollback`: back to the previous active version; any canary or shadow ends.
   * @throws AppError `conflict` with nothing to go back to, the kind's refusal of that version.
   */
  async rollback(name: string): Promise<V> {
    const { kind } = this.d;
    kind.checkName(name);
    const back = kind.previousOf(await kind.read(name));
    if (back !== undefined) await kind.admit?.(back, 'rollback');
    return this.change(name, (cur, stamp) => kind.rollback(cur, name, stamp));
  }

  /**
   * `PUT …/{name}/traffic { candidate, canaryPercent?, shadowPercent? }`: the candidate serves `canaryPercent` of
   * users (stable per user on every instance) and runs off the decision for `shadowPercent` of the other requests;
   * both 0 ends it. @throws AppError `validation_failed` naming every invalid field, `conflict` (the active version),
   *   the kind's refusal of the candidate.
   */
  async traffic(name: string, body: unknown): Promise<V> {
    const { kind } = this.d;
    kind.checkName(name);
    const split = kind.bodies.traffic(body);
    if (split.canaryPercent > 0 || split.shadowPercent > 0) await kind.admit?.(split.candidate, 'traffic');
    return this.change(name, (cur, stamp) => kind.traffic(cur, split, name, stamp));
  }

  /**
   * Whether a promote or traffic change would be taken now (the transition run on the pointer, nothing written): what
   * four-eyes asks before it keeps a lead's request. @throws what the change would throw.
   */
  async check(name: string, change: 'promote' | 'traffic', body: unknown): Promise<void> {
    const { kind } = this.d;
    kind.checkName(name);
    const cur = await kind.read(name);
    if (change === 'promote') kind.promote(cur, kind.bodies.version(body), name, this.stamp());
    else kind.traffic(cur, kind.bodies.traffic(body), name, this.stamp());
  }
}
