/**
 * Signals rollout, on the same rollout as models and rulesets (`lib/pointer`): an upload
 * (`features/{name}/{version}.json`, blob trigger) goes through the upload pipeline ({@link SignalsKind}: compile,
 * name and version, compatibility with what serves) and, if good, is published as the pointer's active version;
 * every instance follows the pointer (pub/sub + reconcile) and swaps its {@link SignalsServing} atomically. A refused
 * upload is recorded and the previous version keeps serving. Admin: status, promote, rollback, traffic (canary and
 * shadow), with the same bodies as the other kinds; a version that lacks a signal what serves reads is refused on
 * promote and traffic as on upload.
 * @module
 */
import type { SignalsShadow, SignalsShadowReport } from './signals-shadow';
import { AppError, toAppError } from '../errors/errors';
import type { ArtifactAdmin } from '../http/admin-routes';
import type { ArtifactWait } from '../inference/readiness-views';
import { PointerFollower } from '../pointer/pointer-follower';
import type { PointerStore, Rejection } from '../pointer/pointer-store';
import { UploadPipeline, type ArtifactUpload, type UploadOutcome } from '../pointer/upload-pipeline';
import { MAX_HISTORY } from '../pointer/version-traffic';
import { silentLogger, type Logger } from '../platform/logger';
import type { Timers } from '../platform/timers';
import type { CompiledSignals } from './compiled-signals';
import type { SignalsRepository } from './signals-repository';
import type { SignalsServing } from './signals-serving';
import { EMPTY_SIGNALS_STATE, SIGNALS_BODIES, SIGNALS_TRAFFIC, type SignalsState } from './signals-traffic';
import { checkCompatible, compileSignalsText, SignalsKind, type SignalsRequirements } from './signals-upload';

/** Dependencies of a {@link SignalsRollout}. */
export interface SignalsRolloutDeps {
  readonly name: string;
  readonly serving: SignalsServing;
  readonly store: PointerStore<SignalsState>;
  readonly repository: SignalsRepository;
  /** What serves now reads of the signals (the serving ruleset's and model versions'). */
  readonly requirements: SignalsRequirements;
  readonly timers: Timers;
  readonly reconcileMs: number;
  /** Wall clock, epoch ms. */
  readonly wallNow?: () => number;
  /** This instance, as rejections name it. Default `this-instance`. */
  readonly instanceId?: string;
  /** Default silent. */
  readonly logger?: Logger;
  /** The shadow figures of the candidate (what the pipeline recorded), shown by `status`. */
  readonly shadow?: SignalsShadow;
  readonly on?: {
    readonly followFailed?: (e: { readonly version: string; readonly reason: string }) => void;
    readonly swapped?: (e: { readonly from: string | undefined; readonly to: string }) => void;
  };
}

/** The admin view (`GET /api/signals/{name}`). */
export interface SignalsStatus {
  readonly name: string;
  /** The version this instance serves. */
  readonly serving: string;
  /** The candidate loaded here, if any. */
  readonly candidate: string | undefined;
  /** The pointer, and the last refused uploads (newest first). */
  readonly pointer: SignalsState & { readonly rejections: readonly Rejection[] };
  /** The candidate's signals beside the active version's, over its shadow share of payments on this instance. */
  readonly shadow?: SignalsShadowReport;
}

/** After an incomplete pass, the next one runs after this, ms, doubling up to {@link RETRY_MAX_MS}. */
export const RETRY_FIRST_MS = 250;
/** The longest wait between retries of an incomplete pass, ms. */
export const RETRY_MAX_MS = 2000;

/** Signals rollout on one instance. */
export class SignalsRollout implements ArtifactAdmin {
  private readonly loaded = new Map<string, CompiledSignals>();
  private readonly follower: PointerFollower;
  private readonly upload: UploadPipeline<CompiledSignals>;
  /** The pointer's active version at the last read (`null`: none, the shipped one serves); unset before the first. */
  private desired: string | null | undefined;
  /** Why the pointer's active version could not be loaded at the last pass. */
  private failure: string | undefined;

  constructor(private readonly deps: SignalsRolloutDeps) {
    this.follower = new PointerFollower({ ...deps, intervalMs: deps.reconcileMs }, () => this.follow(), {
      retry: { firstMs: RETRY_FIRST_MS, maxMs: RETRY_MAX_MS },
    });
    const kind = new SignalsKind({
      name: deps.name,
      store: deps.store,
      repository: deps.repository,
      serving: () => this.serving,
      requirements: deps.requirements,
      keep: (s) => this.keep(s),
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

  private get serving(): string {
    return this.deps.serving.active.version;
  }

  /** Subscribes to pointer changes, converges once, and starts the reconcile loop. */
  start(): Promise<void> {
    return this.follower.start();
  }

  private keep(s: CompiledSignals): void {
    if (this.loaded.size >= MAX_HISTORY + 2) this.loaded.delete(this.loaded.keys().next().value as string);
    this.loaded.set(s.version, s);
  }

  /** A version compiled (once: kept), from the repository. @throws AppError `not_found`, `signals_invalid`, … */
  async compiled(version: string): Promise<CompiledSignals> {
    const hit = this.loaded.get(version);
    if (hit !== undefined) return hit;
    const { repository, name } = this.deps;
    const text = await repository.read(name, version);
    const s = compileSignalsText(text, name, version, repository.source(name, version));
    this.keep(s);
    return s;
  }

  /** A version that may serve: compiled and compatible with what serves. @throws AppError `signals_invalid`, … */
  private async compatible(version: string): Promise<CompiledSignals> {
    const s = await this.compiled(version);
    checkCompatible(s, this.deps.requirements());
    return s;
  }

  /** Follows the pointer now (also on announcements and every reconcile period). */
  converge(): Promise<void> {
    return this.follower.converge();
  }

  /** What readiness waits for: the pointer not read yet, or its active version not served here yet. */
  waiting(): ArtifactWait | undefined {
    const want = this.desired;
    const serving = this.serving;
    if (want === null || (want !== undefined && serving === want)) return undefined;
    return {
      kind: 'signals',
      name: this.deps.name,
      serving,
      active: want ?? null,
      reason:
        want === undefined
          ? 'the signals pointer has not been read yet'
          : (this.failure ?? 'loading the active version'),
    };
  }

  /**
   * One pass: swaps to the pointer's active version and sets its candidate. `false` (retried soon) when the pointer,
   * its active version or its candidate could not be read.
   */
  private async follow(): Promise<boolean> {
    let state: SignalsState;
    try {
      state = (await this.deps.store.read(this.deps.name)) ?? EMPTY_SIGNALS_STATE;
    } catch (err) {
      this.failure = `the pointer store is unavailable: ${toAppError(err).message}`;
      return false;
    }
    this.desired = state.active ?? null;
    const serving = this.deps.serving;
    let complete = true;
    if (state.active !== undefined) {
      try {
        const from = this.serving;
        if (serving.swap(await this.compiled(state.active))) this.deps.on?.swapped?.({ from, to: state.active });
        this.failure = undefined;
      } catch (err) {
        this.failure = toAppError(err).message;
        this.deps.on?.followFailed?.({ version: state.active, reason: this.failure });
        complete = false;
      }
    }
    const t = state.traffic;
    if (t === undefined) {
      serving.setCandidate(undefined, undefined);
      return complete;
    }
    try {
      serving.setCandidate(await this.compiled(t.candidate), t);
      return complete;
    } catch (err) {
      serving.setCandidate(undefined, undefined); // every user on the active version rather than a stale candidate
      this.deps.on?.followFailed?.({ version: t.candidate, reason: toAppError(err).message });
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
  private async change(name: string, fn: (cur: SignalsState) => SignalsState | undefined): Promise<SignalsStatus> {
    await this.deps.store.update(name, (cur) => fn(cur ?? EMPTY_SIGNALS_STATE));
    await this.converge();
    return this.status(name);
  }

  /**
   * `POST /api/signals/{name}/promote { version }`: a version present in the container becomes active (a split whose
   * candidate it is ends). @throws AppError `validation_failed`, `not_found`, `signals_invalid` (including a version
   *   that lacks a signal what serves reads), `conflict` (the version already active).
   */
  async promote(name: string, body: unknown): Promise<SignalsStatus> {
    this.check(name);
    const version = SIGNALS_BODIES.version(body);
    await this.compatible(version); // validated before it is published
    const serving = this.serving;
    return this.change(name, (cur) => SIGNALS_TRAFFIC.promoteTo(cur, version, serving));
  }

  /**
   * `POST /api/signals/{name}/rollback`: back to the previous active version; any canary or shadow ends. The version
   * rolled back to is checked as a promote is. @throws AppError `conflict` with nothing to go back to, `signals_invalid`.
   */
  async rollback(name: string): Promise<SignalsStatus> {
    this.check(name);
    const state = (await this.deps.store.read(name)) ?? EMPTY_SIGNALS_STATE;
    const prev = state.previous[0];
    if (prev !== undefined) await this.compatible(prev);
    return this.change(name, (cur) => SIGNALS_TRAFFIC.rollBack(cur));
  }

  /**
   * `PUT /api/signals/{name}/traffic { candidate, canaryPercent?, shadowPercent? }`: the candidate computes the signals
   * of `canaryPercent` of users (stable per user on every instance) and runs off the decision for `shadowPercent` of
   * the other payments; both 0 ends it.
   * @throws AppError `validation_failed` naming every invalid field, `conflict` (the active version), or the
   *   candidate's refusal (`not_found`, `signals_invalid`, including a signal what serves reads that it lacks).
   */
  async traffic(name: string, body: unknown): Promise<SignalsStatus> {
    this.check(name);
    const split = SIGNALS_BODIES.traffic(body);
    if (split.canaryPercent > 0 || split.shadowPercent > 0) await this.compatible(split.candidate);
    const serving = this.serving;
    return this.change(name, (cur) => SIGNALS_TRAFFIC.setTraffic(cur, split, serving));
  }

  /** `GET /api/signals/{name}`. */
  async status(name: string): Promise<SignalsStatus> {
    this.check(name);
    const [state, rejections] = await Promise.all([this.deps.store.read(name), this.deps.store.rejections(name)]);
    return {
      name,
      serving: this.serving,
      candidate: this.deps.serving.candidate?.version,
      pointer: { ...(state ?? EMPTY_SIGNALS_STATE), rejections },
      ...shadowOf(this.deps.shadow?.report(), this.deps.serving.candidate?.version),
    };
  }

  private check(name: string): void {
    if (name !== this.deps.name) throw new AppError('not_found', `This app serves signals ${this.deps.name}.`);
  }

  async dispose(): Promise<void> {
    await this.follower.dispose();
    await this.deps.store.dispose();
  }
}

/** The shadow report, when it is of the candidate loaded now. */
function shadowOf(
  report: SignalsShadowReport | undefined,
  candidate: string | undefined,
): { shadow?: SignalsShadowReport } {
  return report === undefined || report.candidate !== candidate ? {} : { shadow: report };
}
