/**
 * Ruleset rollout, on the same rollout as models (`lib/pointer`): an upload (`rulesets/{name}/{version}.json`, blob
 * trigger) goes through the upload pipeline ({@link RulesetKind}: schema, compile, golden cases) and, if good, is
 * published as the pointer's active version; every instance follows the pointer (pub/sub + reconcile) and swaps
 * atomically. A refused upload is recorded and the previous ruleset keeps serving. Admin: status, promote,
 * rollback, traffic (canary and shadow), with the same bodies as models.
 */
import { AppError, toAppError } from '../errors/errors';
import type { ArtifactAdmin } from '../http/admin-routes';
import type { ArtifactWait } from '../inference/readiness-views';
import { PointerFollower } from '../pointer/pointer-follower';
import type { PointerStore, Rejection } from '../pointer/pointer-store';
import { UploadPipeline, type ArtifactUpload, type UploadOutcome } from '../pointer/upload-pipeline';
import { silentLogger, type Logger } from '../platform/logger';
import type { Timers } from '../platform/timers';
import type { CompiledRuleset, ServingSignals } from './compile-ruleset';
import type { Decisioning } from './decisioning';
import { loadRuleset } from './load-ruleset';
import type { RulesetRepository } from './ruleset-repository';
import {
  EMPTY_STATE,
  MAX_HISTORY,
  parseTrafficBody,
  parseVersionBody,
  promoteTo,
  rollBack,
  setTraffic,
  type RulesetState,
} from './ruleset-traffic';
import { GOLDEN_THRESHOLDS, RulesetKind } from './ruleset-upload';

export { GOLDEN_THRESHOLDS } from './ruleset-upload';

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
  /** This instance, as rejections name it. Default `this-instance`. */
  readonly instanceId?: string;
  /** Default silent. */
  readonly logger?: Logger;
  /** The signals version serving beside the rules: an upload reading a signal it lacks is refused. */
  readonly servingSignals?: () => ServingSignals | undefined;
  readonly on?: { readonly followFailed?: (e: { readonly version: string; readonly reason: string }) => void };
}

/** The admin view. */
export interface RulesetStatus {
  readonly name: string;
  /** The version this instance serves. */
  readonly serving: string | undefined;
  /** The pointer, and the last refused uploads (newest first). */
  readonly pointer: RulesetState & { readonly rejections: readonly Rejection[] };
  readonly shadow: ReturnType<Decisioning['shadowReport']>;
}

/**
 * After a pass that could not load what the pointer names (e.g. an approved draft while the case database is not
 * open yet), the next one runs after this, ms, doubling up to {@link RETRY_MAX_MS} (never past the reconcile period).
 */
export const RETRY_FIRST_MS = 250;
/** The longest wait between retries of an incomplete pass, ms. */
export const RETRY_MAX_MS = 2000;

/** Ruleset rollout on one instance. */
export class RulesetRollout implements ArtifactAdmin {
  private readonly loaded = new Map<string, CompiledRuleset>();
  private readonly follower: PointerFollower;
  private readonly upload: UploadPipeline<CompiledRuleset>;
  /** The pointer's active version at the last read (`null`: none, the shipped one serves); unset before the first. */
  private desired: string | null | undefined;
  /** Why the pointer's active version could not be loaded at the last pass. */
  private failure: string | undefined;

  constructor(private readonly deps: RulesetRolloutDeps) {
    this.follower = new PointerFollower({ ...deps, intervalMs: deps.reconcileMs }, () => this.follow(), {
      retry: { firstMs: RETRY_FIRST_MS, maxMs: RETRY_MAX_MS },
    });
    const kind = new RulesetKind({
      name: deps.name,
      store: deps.store,
      repository: deps.repository,
      serving: () => this.serving,
      keep: (rs) => this.keep(rs),
      ...(deps.servingSignals === undefined ? {} : { signals: deps.servingSignals }),
    });
    this.upload = new UploadPipeline({
      kind,
      store: deps.store,
      follower: this.follower,
      instanceId: deps.instanceId ?? 'this-instance',
      wallNow: deps.wallNow ?? Date.now,
      logger: deps.logger ?? silentLogger,
    });
  }

  private get serving(): string | undefined {
    return this.deps.decisioning.ruleset?.version;
  }

  /** Subscribes to pointer changes, converges once, and starts the reconcile loop. */
  start(): Promise<void> {
    return this.follower.start();
  }

  private keep(rs: CompiledRuleset): void {
    if (this.loaded.size >= MAX_HISTORY + 2) this.loaded.delete(this.loaded.keys().next().value as string);
    this.loaded.set(rs.version, rs);
  }

  private async compiled(version: string): Promise<CompiledRuleset> {
    const hit = this.loaded.get(version);
    if (hit !== undefined) return hit;
    const { repository, name } = this.deps;
    const rs = loadRuleset(await repository.read(name, version), GOLDEN_THRESHOLDS, repository.source(name, version));
    this.keep(rs);
    return rs;
  }

  /** Follows the pointer now (also on announcements and every reconcile period). */
  converge(): Promise<void> {
    return this.follower.converge();
  }

  /** What readiness waits for: the pointer not read yet, or its active version not served here yet. */
  waiting(): ArtifactWait | undefined {
    const want = this.desired;
    const serving = this.serving ?? null;
    if (want === null || (want !== undefined && serving === want)) return undefined;
    return {
      kind: 'ruleset',
      name: this.deps.name,
      serving,
      active: want ?? null,
      reason:
        want === undefined
          ? 'the ruleset pointer has not been read yet'
          : (this.failure ?? 'loading the active version'),
    };
  }

  /**
   * One pass: swaps to the pointer's active version and sets its candidate. `false` (retried soon) when the pointer,
   * its active version or its candidate could not be read.
   */
  private async follow(): Promise<boolean> {
    let state: RulesetState;
    try {
      state = (await this.deps.store.read(this.deps.name)) ?? EMPTY_STATE;
    } catch (err) {
      this.failure = `the pointer store is unavailable: ${toAppError(err).message}`;
      return false;
    }
    this.desired = state.active ?? null;
    const d = this.deps.decisioning;
    let complete = true;
    if (state.active !== undefined) {
      try {
        d.swap(await this.compiled(state.active));
        this.failure = undefined;
      } catch (err) {
        this.failure = toAppError(err).message;
        this.deps.on?.followFailed?.({ version: state.active, reason: this.failure });
        complete = false;
      }
    }
    const t = state.traffic;
    if (t === undefined) {
      d.setCandidate(undefined, undefined);
      return complete;
    }
    try {
      d.setCandidate(await this.compiled(t.candidate), t);
      return complete;
    } catch (err) {
      d.setCandidate(undefined, undefined); // every user on the active version rather than a stale candidate
      this.deps.on?.followFailed?.({ version: t.candidate, reason: toAppError(err).message });
      return false;
    }
  }

  /**
   * The blob trigger: validates an upload and publishes it as the active version on every instance. A refused
   * upload is an outcome (recorded, listed by {@link status}); the previous ruleset keeps serving.
   * @throws transient AppErrors only (store or container unavailable): the trigger retries.
   */
  handleUpload(upload: ArtifactUpload): Promise<UploadOutcome> {
    return this.upload.handle(upload);
  }

  /** Applies a transition to the pointer and converges. */
  private async change(name: string, fn: (cur: RulesetState) => RulesetState | undefined): Promise<RulesetStatus> {
    await this.deps.store.update(name, (cur) => fn(cur ?? EMPTY_STATE));
    await this.converge();
    return this.status(name);
  }

  /**
   * `POST /api/rulesets/{name}/promote { version }`: a version present in the container becomes active (a
   * split whose candidate it is ends). @throws AppError `validation_failed`, `not_found`, `ruleset_invalid`,
   *   `conflict` (the version already active).
   */
  async promote(name: string, body: unknown): Promise<RulesetStatus> {
    this.check(name);
    const version = parseVersionBody(body);
    await this.compiled(version); // validated before it is published
    const serving = this.serving;
    return this.change(name, (cur) => promoteTo(cur, version, serving));
  }

  /** `POST /api/rulesets/{name}/rollback`: back to the previous active version; any canary or shadow ends. */
  rollback(name: string): Promise<RulesetStatus> {
    this.check(name);
    return this.change(name, rollBack);
  }

  /**
   * `PUT /api/rulesets/{name}/traffic { candidate, canaryPercent?, shadowPercent? }`: the candidate decides
   * for `canaryPercent` of users (stable per user on every instance) and is evaluated off the decision for
   * `shadowPercent` of the other payments; both 0 ends it.
   * @throws AppError `validation_failed` naming every invalid field, `conflict` (the active version), or the
   * candidate's load error (`not_found`, `ruleset_invalid`).
   */
  async traffic(name: string, body: unknown): Promise<RulesetStatus> {
    this.check(name);
    const split = parseTrafficBody(body);
    if (split.canaryPercent > 0 || split.shadowPercent > 0) await this.compiled(split.candidate);
    const serving = this.serving;
    return this.change(name, (cur) => setTraffic(cur, split, serving));
  }

  /** `GET /api/rulesets/{name}`. */
  async status(name: string): Promise<RulesetStatus> {
    this.check(name);
    const [state, rejections] = await Promise.all([this.deps.store.read(name), this.deps.store.rejections(name)]);
    return {
      name,
      serving: this.serving,
      pointer: { ...(state ?? EMPTY_STATE), rejections },
      shadow: this.deps.decisioning.shadowReport(),
    };
  }

  private check(name: string): void {
    if (name !== this.deps.name) throw new AppError('not_found', `This app serves ruleset ${this.deps.name}.`);
  }

  async dispose(): Promise<void> {
    await this.follower.dispose();
    await this.deps.store.dispose();
  }
}
