/**
 * Ruleset rollout, like models: an upload (`rulesets/{name}/{version}.json`, blob trigger) is validated
 * (schema, compile, golden cases) and, if good, published as the fleet pointer's active version; every
 * instance follows the pointer (pub/sub + reconcile) and swaps atomically. A refused upload is recorded and
 * the previous ruleset keeps serving. Admin: status, promote, rollback, traffic (canary and shadow).
 */
import { AppError, toAppError } from '../errors/errors';
import type { Timers } from '../time/timers';
import type { CompiledRuleset } from './compile-ruleset';
import type { Decisioning } from './decisioning';
import { loadRuleset } from './load-ruleset';
import { MAX_HISTORY, type RulesetPointerStore, type RulesetState } from './ruleset-pointer';
import { activate, parseTrafficBody, promoteTo, parseVersionBody, rollBack, setTraffic } from './ruleset-traffic';
import { parseRulesetPath, type RulesetRepository } from './ruleset-repository';

/**
 * Thresholds golden cases are checked with when the ruleset declares no `default` profile (the model's are
 * not known when a ruleset loads).
 */
export const GOLDEN_THRESHOLDS = Object.freeze({ review: 0.5, decline: 0.9 });

/** Dependencies of a {@link RulesetRollout}. */
export interface RulesetRolloutDeps {
  readonly name: string;
  readonly decisioning: Decisioning;
  readonly store: RulesetPointerStore;
  readonly repository: RulesetRepository;
  readonly timers: Timers;
  readonly reconcileMs: number;
  /** Wall clock, epoch ms. */
  readonly wallNow?: () => number;
  readonly on?: { readonly followFailed?: (e: { readonly version: string; readonly reason: string }) => void };
}

/** The admin view. */
export interface RulesetStatus {
  readonly name: string;
  /** The version this instance serves. */
  readonly serving: string | undefined;
  readonly pointer: RulesetState;
  readonly shadow: ReturnType<Decisioning['shadowReport']>;
}

/** Ruleset rollout on one instance. */
export class RulesetRollout {
  private timer: unknown;
  private disposed = false;
  private converging: Promise<void> | undefined;
  private again: Promise<void> | undefined;
  private readonly loaded = new Map<string, CompiledRuleset>();

  private readonly listener = (name: string): void => {
    if (name === this.deps.name) void this.converge();
  };

  constructor(private readonly deps: RulesetRolloutDeps) {}

  private get wallNow(): () => number {
    return this.deps.wallNow ?? Date.now;
  }

  /** Subscribes to pointer changes, converges once, and starts the reconcile loop. */
  async start(): Promise<void> {
    await this.deps.store.subscribe(this.listener).catch(() => false);
    await this.converge();
    this.schedule();
  }

  private schedule(): void {
    if (this.disposed) return;
    this.timer = this.deps.timers.setTimeout(() => {
      void this.deps.store.subscribe(this.listener).catch(() => false);
      void this.converge().finally(() => this.schedule());
    }, this.deps.reconcileMs);
  }

  private async compiled(version: string): Promise<CompiledRuleset> {
    const hit = this.loaded.get(version);
    if (hit !== undefined) return hit;
    const { repository, name } = this.deps;
    const rs = loadRuleset(await repository.read(name, version), GOLDEN_THRESHOLDS, repository.source(name, version));
    if (this.loaded.size >= MAX_HISTORY + 2) this.loaded.delete(this.loaded.keys().next().value as string);
    this.loaded.set(version, rs);
    return rs;
  }

  /**
   * Follows the pointer: swaps to its active version and sets its candidate (single-flight). A call while
   * one runs queues one more pass after it, so a change announced mid-pass is not missed.
   */
  converge(): Promise<void> {
    if (this.converging !== undefined) {
      this.again ??= this.converging.then(() => {
        this.again = undefined;
        return this.converge();
      });
      return this.again;
    }
    this.converging = this.follow().finally(() => (this.converging = undefined));
    return this.converging;
  }

  private async follow(): Promise<void> {
    let state: RulesetState;
    try {
      state = await this.deps.store.read(this.deps.name);
    } catch {
      return; // the next reconcile retries
    }
    const d = this.deps.decisioning;
    if (state.active !== undefined) {
      try {
        d.swap(await this.compiled(state.active));
      } catch (err) {
        this.deps.on?.followFailed?.({ version: state.active, reason: toAppError(err).message });
      }
    }
    const t = state.traffic;
    if (t === undefined) return d.setCandidate(undefined, undefined);
    try {
      d.setCandidate(await this.compiled(t.candidate), t);
    } catch (err) {
      d.setCandidate(undefined, undefined); // every user on the active version rather than a stale candidate
      this.deps.on?.followFailed?.({ version: t.candidate, reason: toAppError(err).message });
    }
  }

  /**
   * The blob trigger: validates an upload and publishes it as the active version on every instance.
   * @throws AppError `ruleset_invalid` (recorded; the previous ruleset keeps serving), `not_found` for another name.
   */
  async handleUpload(blobPath: string, text: string): Promise<{ name: string; version: string; generation: number }> {
    const ref = parseRulesetPath(blobPath);
    if (ref === undefined || ref.name !== this.deps.name)
      throw new AppError('not_found', `Not a ruleset this app serves (rulesets/${this.deps.name}/{version}.json).`);
    let rs: CompiledRuleset;
    try {
      rs = loadRuleset(text, GOLDEN_THRESHOLDS, blobPath);
      if (rs.name !== ref.name || rs.version !== ref.version)
        throw new AppError('ruleset_invalid', 'The document name and version must match its path.', {
          errors: [{ path: 'version', message: `the path says ${ref.name} ${ref.version}` }],
        });
    } catch (err) {
      const e = toAppError(err);
      const at = new Date(this.wallNow()).toISOString();
      await this.deps.store
        .update(this.deps.name, (s) => ({
          ...s,
          rejections: [{ version: ref.version, reason: e.message, errors: e.errors, at }, ...s.rejections].slice(
            0,
            MAX_HISTORY,
          ),
        }))
        .catch(() => undefined);
      throw e;
    }
    this.loaded.set(rs.version, rs);
    const serving = this.deps.decisioning.ruleset?.version;
    const s = await this.deps.store.update(this.deps.name, (cur) => activate(cur, rs.version, serving));
    await this.converge();
    return { name: rs.name, version: rs.version, generation: s.generation };
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
    const serving = this.deps.decisioning.ruleset?.version;
    await this.deps.store.update(name, (cur) => promoteTo(cur, version, serving));
    await this.converge();
    return this.status(name);
  }

  /** `POST /api/rulesets/{name}/rollback`: back to the previous active version; any canary or shadow ends. */
  async rollback(name: string): Promise<RulesetStatus> {
    this.check(name);
    await this.deps.store.update(name, rollBack);
    await this.converge();
    return this.status(name);
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
    const serving = this.deps.decisioning.ruleset?.version;
    await this.deps.store.update(name, (cur) => setTraffic(cur, split, serving));
    await this.converge();
    return this.status(name);
  }

  /** `GET /api/rulesets/{name}`. */
  async status(name: string): Promise<RulesetStatus> {
    this.check(name);
    return {
      name,
      serving: this.deps.decisioning.ruleset?.version,
      pointer: await this.deps.store.read(name),
      shadow: this.deps.decisioning.shadowReport(),
    };
  }

  private check(name: string): void {
    if (name !== this.deps.name) throw new AppError('not_found', `This app serves ruleset ${this.deps.name}.`);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.deps.timers.clearTimeout(this.timer);
    await this.deps.store.dispose();
  }
}
