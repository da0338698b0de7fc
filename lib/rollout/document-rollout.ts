/**
 * The rollout of a whole-document kind (rulesets, signals) on one instance, on the one rollout every kind shares: an
 * upload (`{prefix}/{name}/{version}.json`, blob trigger) goes through the upload pipeline ({@link DocumentKind}) and,
 * if good, is published as the pointer's active version; every instance follows the pointer (pub/sub + reconcile)
 * and swaps what it serves ({@link DocumentTarget}) atomically. A refused upload is recorded and the previous version
 * keeps serving. Admin: status, promote, rollback, traffic (canary and shadow), with every kind's bodies and rules.
 * @module
 */
import { hostname } from 'node:os';
import { AppError, toAppError } from '../errors/errors';
import type { ArtifactAdmin } from '../http/admin-routes';
import type { ArtifactWait } from '../inference/readiness-views';
import { silentLogger, type Logger } from '../platform/logger';
import type { Timers } from '../platform/timers';
import { DocumentKind, type DocumentSpec, type Versioned } from './document-kind';
import type { DocumentRepository } from './document-repository';
import { PointerFollower } from './pointer-follower';
import type { PointerStore } from './pointer-store';
import { RolloutAdmin, type AdminKind } from './rollout-admin';
import type { TrafficSplit } from './rollout-rules';
import { rolloutStatus, versionView, type RolloutStatus, type VersionView } from './rollout-status';
import { UploadPipeline, type ArtifactUpload, type UploadOutcome } from './upload-pipeline';
import { EMPTY_VERSION_STATE, MAX_HISTORY, stamped, type VersionState } from './version-traffic';

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
  /** This instance, as rejections and changes name it. Default `{host}-{pid}`, as the model rollout's. */
  readonly instanceId?: string;
  /** Default silent. */
  readonly logger?: Logger;
  readonly on?: {
    readonly followFailed?: (e: { readonly version: string; readonly reason: string }) => void;
    readonly swapped?: (e: { readonly from: string | undefined; readonly to: string }) => void;
  };
}

/** The admin view (`GET /api/{kind}/{name}`): every kind's status view, with the kind's shadow figures. */
export type DocumentStatus<R extends object = object> = RolloutStatus<R>;

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
  private readonly admin: RolloutAdmin<VersionState, DocumentStatus<R>>;
  /** The pointer's active version at the last read (`null`: none, the shipped one serves); unset before the first. */
  private desired: string | null | undefined;
  /** Why the pointer's active version could not be loaded at the last pass. */
  private failure: string | undefined;

  constructor(private readonly d: DocumentRolloutDeps<C>) {
    const instanceId = d.instanceId ?? `${hostname()}-${process.pid}`;
    const wallNow = d.wallNow ?? Date.now;
    this.follower = new PointerFollower({ ...d, name: d.spec.name, intervalMs: d.reconcileMs }, () => this.follow(), {
      retry: { firstMs: RETRY_FIRST_MS, maxMs: RETRY_MAX_MS },
    });
    const kind = new DocumentKind<C>({
      spec: d.spec,
      store: d.store,
      repository: d.repository,
      serving: () => d.target.serving(),
      keep: (c) => this.keep(c),
      instanceId,
    });
    this.upload = new UploadPipeline({
      kind,
      store: d.store,
      follower: this.follower,
      instanceId,
      wallNow,
      logger: d.logger ?? silentLogger,
    });
    this.admin = new RolloutAdmin({ kind: this.adminKind(), instanceId, wallNow });
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

  /** `GET …/{name}`: the status view (`rollout-status.ts`). @throws AppError `not_found` for another name. */
  status(name: string): Promise<DocumentStatus<R>> {
    return this.admin.status(name);
  }

  /** `POST …/{name}/promote { version }` (see {@link RolloutAdmin.promote}). */
  promote(name: string, body: unknown): Promise<DocumentStatus<R>> {
    return this.admin.promote(name, body);
  }

  /**
   * `POST …/{name}/rollback` (see {@link RolloutAdmin.rollback}). For a kind with a compatibility check, the version
   * rolled back to is checked as a promote is (it served before, so it compiles).
   */
  rollback(name: string): Promise<DocumentStatus<R>> {
    return this.admin.rollback(name);
  }

  /** `PUT …/{name}/traffic { candidate, canaryPercent?, shadowPercent? }` (see {@link RolloutAdmin.traffic}). */
  traffic(name: string, body: unknown): Promise<DocumentStatus<R>> {
    return this.admin.traffic(name, body);
  }

  /** The kind as the one admin sees it. */
  private adminKind(): AdminKind<VersionState, DocumentStatus<R>> {
    const { spec, store, target } = this.d;
    const serving = (): string | undefined => target.serving();
    const cur = (s: VersionState | undefined): VersionState => s ?? EMPTY_VERSION_STATE;
    return {
      bodies: spec.bodies,
      checkName: (name) => this.check(name),
      read: (name) => store.read(name),
      update: (name, fn) => store.update(name, fn),
      promote: (s, version, name, stamp) =>
        stamped(cur(s), spec.traffic.promoteTo(cur(s), version, serving(), name), {
          kind: 'promote',
          version,
          ...stamp,
        }),
      rollback: (s, name, stamp) => {
        const next = spec.traffic.rollBack(cur(s), name);
        return stamped(cur(s), next, { kind: 'rollback', version: next?.active ?? '', ...stamp });
      },
      traffic: (s, split, _name, stamp) =>
        stamped(cur(s), spec.traffic.setTraffic(cur(s), split, serving()), {
          kind: 'traffic',
          version: split.candidate,
          ...stamp,
        }),
      previousOf: (s) => s?.previous[0],
      admit: async (version, change) => {
        if (change !== 'rollback' || spec.compatible !== undefined) await this.servable(version);
      },
      converge: () => this.converge(),
      status: (name) => this.view(name),
    };
  }

  /** The status view of `name`. */
  private async view(name: string): Promise<DocumentStatus<R>> {
    const { store, target } = this.d;
    const [read, rejections] = await Promise.all([store.read(name), store.rejections(name)]);
    const state = read ?? EMPTY_VERSION_STATE;
    const stamp = (v: string): VersionView => versionView(v, state.stamps?.[v]);
    return rolloutStatus<R>({
      name,
      generation: state.generation,
      serving: target.serving(),
      servingCandidate: target.candidate(),
      active: state.active === undefined ? undefined : stamp(state.active),
      previous: state.previous.map(stamp),
      traffic: state.traffic,
      lastChange: state.lastChange,
      rejections,
      shadow: target.shadow() as R | undefined,
    });
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
