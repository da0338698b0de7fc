/**
 * The rollout of a whole-document kind (rulesets, signals) on one instance, on the one rollout every kind shares: an
 * upload (`{prefix}/{name}/{version}.json`, blob trigger) goes through the upload pipeline ({@link DocumentKind}) and,
 * if good, is published as the pointer's active version; every instance follows the pointer (pub/sub + reconcile)
 * and swaps what it serves ({@link DocumentTarget}) atomically. A refused upload is recorded and the previous version
 * keeps serving. Admin: status, promote, rollback, traffic (canary and shadow), with every kind's bodies and rules.
 * @module
 */
import { AppError, toAppError } from '../errors/errors';
import type { ArtifactAdmin } from '../http/admin-routes';
import type { ArtifactWait } from '../inference/readiness-views';
import { silentLogger, type Logger } from '../platform/logger';
import type { Timers } from '../platform/timers';
import { DocumentKind, type DocumentSpec, type Versioned } from './document-kind';
import type { DocumentRepository } from './document-repository';
import { PointerFollower } from './pointer-follower';
import type { PointerStore, Rejection } from './pointer-store';
import type { TrafficSplit } from './rollout-rules';
import { UploadPipeline, type ArtifactUpload, type UploadOutcome } from './upload-pipeline';
import { EMPTY_VERSION_STATE, MAX_HISTORY, type VersionState } from './version-traffic';

/** What serves the documents on this instance. */
export interface DocumentTarget<C extends Versioned> {
  /** The version serving (the shipped one until a pointer names another), if any. */
  serving(): string | undefined;
  /** The candidate loaded, if any. */
  candidate(): string | undefined;
  /** Serves `compiled` as the active version; whether that changed what serves. */
  swap(compiled: C): boolean;
  /** Sets (or, `undefined`, ends) the candidate and its shares. */
  setCandidate(compiled: C | undefined, split: TrafficSplit | undefined): void;
  /** The candidate's shadow figures on this instance, if any. */
  shadow(): object | undefined;
}

/** Dependencies of a {@link DocumentRollout}. */
export interface DocumentRolloutDeps<C extends Versioned> {
  readonly spec: DocumentSpec<C>;
  readonly target: DocumentTarget<C>;
  readonly store: PointerStore<VersionState>;
  readonly repository: DocumentRepository;
  readonly timers: Timers;
  readonly reconcileMs: number;
  /** Wall clock, epoch ms. */
  readonly wallNow?: () => number;
  /** This instance, as rejections name it. Default `this-instance`. */
  readonly instanceId?: string;
  /** Default silent. */
  readonly logger?: Logger;
  readonly on?: {
    readonly followFailed?: (e: { readonly version: string; readonly reason: string }) => void;
    readonly swapped?: (e: { readonly from: string | undefined; readonly to: string }) => void;
  };
}

/** The admin view (`GET /api/{kind}/{name}`), the same for every whole-document kind. */
export interface DocumentStatus<R extends object = object> {
  readonly name: string;
  /** The version this instance serves. */
  readonly serving: string | undefined;
  /** The candidate loaded here, if any. */
  readonly candidate: string | undefined;
  /** The pointer, and the last refused uploads (newest first). */
  readonly pointer: VersionState & { readonly rejections: readonly Rejection[] };
  /** The candidate's shadow figures on this instance, when it has any. */
  readonly shadow?: R;
}

/**
 * After a pass that could not load what the pointer names (e.g. an approved draft while the case database is not
 * open yet), the next one runs after this, ms, doubling up to {@link RETRY_MAX_MS} (never past the reconcile period).
 */
export const RETRY_FIRST_MS = 250;
/** The longest wait between retries of an incomplete pass, ms. */
export const RETRY_MAX_MS = 2000;

/** The rollout of one whole-document kind on one instance. */
export class DocumentRollout<C extends Versioned, R extends object = object> implements ArtifactAdmin {
  private readonly loaded = new Map<string, C>();
  private readonly follower: PointerFollower;
  private readonly upload: UploadPipeline<C>;
  /** The pointer's active version at the last read (`null`: none, the shipped one serves); unset before the first. */
  private desired: string | null | undefined;
  /** Why the pointer's active version could not be loaded at the last pass. */
  private failure: string | undefined;

  constructor(private readonly d: DocumentRolloutDeps<C>) {
    this.follower = new PointerFollower({ ...d, name: d.spec.name, intervalMs: d.reconcileMs }, () => this.follow(), {
      retry: { firstMs: RETRY_FIRST_MS, maxMs: RETRY_MAX_MS },
    });
    const kind = new DocumentKind<C>({
      spec: d.spec,
      store: d.store,
      repository: d.repository,
      serving: () => d.target.serving(),
      keep: (c) => this.keep(c),
    });
    this.upload = new UploadPipeline({
      kind,
      store: d.store,
      follower: this.follower,
      instanceId: d.instanceId ?? 'this-instance',
      wallNow: d.wallNow ?? Date.now,
      logger: d.logger ?? silentLogger,
    });
  }

  /** Subscribes to pointer changes, converges once, and starts the reconcile loop. */
  start(): Promise<void> {
    return this.follower.start();
  }

  private keep(c: C): void {
    if (this.loaded.size >= MAX_HISTORY + 2) this.loaded.delete(this.loaded.keys().next().value as string);
    this.loaded.set(c.version, c);
  }

  /** A version compiled (once: kept), from the repository. @throws AppError `not_found`, the kind's invalid code, … */
  async compiled(version: string): Promise<C> {
    const hit = this.loaded.get(version);
    if (hit !== undefined) return hit;
    const { repository, spec } = this.d;
    const ref = { name: spec.name, version };
    const c = spec.compile(await repository.read(ref.name, version), ref, repository.source(ref.name, version), false);
    this.keep(c);
    return c;
  }

  /** A version that may serve: compiled and compatible with what serves. */
  private async servable(version: string): Promise<C> {
    const c = await this.compiled(version);
    this.d.spec.compatible?.(c);
    return c;
  }

  /** Follows the pointer now (also on announcements and every reconcile period). */
  converge(): Promise<void> {
    return this.follower.converge();
  }

  /** What readiness waits for: the pointer not read yet, or its active version not served here yet. */
  waiting(): ArtifactWait | undefined {
    const want = this.desired;
    const serving = this.d.target.serving() ?? null;
    if (want === null || (want !== undefined && serving === want)) return undefined;
    const kind = this.d.spec.kind;
    return {
      kind,
      name: this.d.spec.name,
      serving,
      active: want ?? null,
      reason:
        want === undefined
          ? `the ${kind} pointer has not been read yet`
          : (this.failure ?? 'loading the active version'),
    };
  }

  /**
   * One pass: swaps to the pointer's active version and sets its candidate. `false` (retried soon) when the pointer,
   * its active version or its candidate could not be read.
   */
  private async follow(): Promise<boolean> {
    const { store, spec, target, on } = this.d;
    let state: VersionState;
    try {
      state = (await store.read(spec.name)) ?? EMPTY_VERSION_STATE;
    } catch (err) {
      this.failure = `the pointer store is unavailable: ${toAppError(err).message}`;
      return false;
    }
    this.desired = state.active ?? null;
    let complete = true;
    if (state.active !== undefined) {
      try {
        const from = target.serving();
        if (target.swap(await this.compiled(state.active))) on?.swapped?.({ from, to: state.active });
        this.failure = undefined;
      } catch (err) {
        this.failure = toAppError(err).message;
        on?.followFailed?.({ version: state.active, reason: this.failure });
        complete = false;
      }
    }
    const t = state.traffic;
    if (t === undefined) {
      target.setCandidate(undefined, undefined);
      return complete;
    }
    try {
      target.setCandidate(await this.compiled(t.candidate), t);
      return complete;
    } catch (err) {
      target.setCandidate(undefined, undefined); // every user on the active version rather than a stale candidate
      on?.followFailed?.({ version: t.candidate, reason: toAppError(err).message });
      return false;
    }
  }

  /**
   * The blob trigger: validates an upload and publishes it as the active version on every instance. A refused
   * upload is an outcome (recorded, listed by {@link status}); the previous version keeps serving.
   * @throws transient AppErrors only (store or container unavailable): the trigger retries.
   */
  handleUpload(upload: ArtifactUpload): Promise<UploadOutcome> {
    return this.upload.handle(upload);
  }

  /** Applies a transition to the pointer and converges. */
  private async change(name: string, fn: (cur: VersionState) => VersionState | undefined): Promise<DocumentStatus<R>> {
    await this.d.store.update(name, (cur) => fn(cur ?? EMPTY_VERSION_STATE));
    await this.converge();
    return this.status(name);
  }

  /**
   * `POST …/{name}/promote { version }`: a version present in the container, newer than the active one, becomes
   * active (a split whose candidate it is ends). @throws AppError `validation_failed`, `not_found`, the kind's invalid
   * code (including a version that may not serve beside what serves), `conflict` (the active version, or an older one).
   */
  async promote(name: string, body: unknown): Promise<DocumentStatus<R>> {
    this.check(name);
    const { spec, target } = this.d;
    const version = spec.bodies.version(body);
    await this.servable(version); // validated before it is published
    const serving = target.serving();
    return this.change(name, (cur) => spec.traffic.promoteTo(cur, version, serving, name));
  }

  /**
   * `POST …/{name}/rollback`: back to the previous active version; any canary or shadow ends. For a kind with a
   * compatibility check, the version rolled back to is checked as a promote is (it served before, so it compiles).
   * @throws AppError `conflict` with nothing to go back to, the kind's invalid code.
   */
  async rollback(name: string): Promise<DocumentStatus<R>> {
    this.check(name);
    const prev = ((await this.d.store.read(name)) ?? EMPTY_VERSION_STATE).previous[0];
    if (prev !== undefined && this.d.spec.compatible !== undefined) await this.servable(prev);
    return this.change(name, (cur) => this.d.spec.traffic.rollBack(cur, name));
  }

  /**
   * `PUT …/{name}/traffic { candidate, canaryPercent?, shadowPercent? }`: the candidate serves `canaryPercent` of
   * users (stable per user on every instance) and runs off the decision for `shadowPercent` of the other payments;
   * both 0 ends it. @throws AppError `validation_failed` naming every invalid field, `conflict` (the active version),
   *   or the candidate's refusal (`not_found`, the kind's invalid code).
   */
  async traffic(name: string, body: unknown): Promise<DocumentStatus<R>> {
    this.check(name);
    const { spec, target } = this.d;
    const split = spec.bodies.traffic(body);
    if (split.canaryPercent > 0 || split.shadowPercent > 0) await this.servable(split.candidate);
    const serving = target.serving();
    return this.change(name, (cur) => spec.traffic.setTraffic(cur, split, serving));
  }

  /** `GET …/{name}`. */
  async status(name: string): Promise<DocumentStatus<R>> {
    this.check(name);
    const { store, target } = this.d;
    const [state, rejections] = await Promise.all([store.read(name), store.rejections(name)]);
    const shadow = target.shadow() as R | undefined;
    return {
      name,
      serving: target.serving(),
      candidate: target.candidate(),
      pointer: { ...(state ?? EMPTY_VERSION_STATE), rejections },
      ...(shadow === undefined ? {} : { shadow }),
    };
  }

  private check(name: string): void {
    const { spec } = this.d;
    if (name !== spec.name) throw new AppError('not_found', `This app serves ${spec.kind} ${spec.name}.`);
  }

  async dispose(): Promise<void> {
    await this.follower.dispose();
    await this.d.store.dispose();
  }
}
