import type { CacheStatus, ContextLookup, ContextProvider } from '../context/context-provider';
import type { Decision } from '../domain/decision';
import type { PaymentEvent } from '../domain/payment-event';
import { featurize, FEATURE_COUNT } from '../features/featurizer';
import type { RunTiming } from '../inference/backend';
import type { SessionManager } from '../inference/session-manager';
import type { Lease } from '../inference/version-leases';
import type { ModelManifest } from '../models/manifest';
import {
  decide,
  invalidScoreKind,
  MODEL_OUTPUT_INVALID_REASON,
  topReasons,
  type InvalidScoreKind,
  type Reason,
} from './decision';
import type { EscalationInfo, ScoreSource } from './escalation-info';
import type { Decisioning, Prepared, RulesetDecision } from '../decisioning/decisioning';
import type { Action } from '../decisioning/ruleset-schema';
import { FEATURE_NAMES } from '../features/featurizer';
import type { Velocity } from '../domain/user-context';

/** The result of scoring one payment (HTTP 200 body; Service Bus result body). */
export interface ScoreResult {
  readonly transactionId: string;
  /**
   * Fraud probability in [0, 1], rounded to 6 decimals; `null` when the model gave no valid score (then
   * `decision` is `review` and the only reason is `model_output_invalid`: fail closed).
   */
  readonly score: number | null;
  readonly decision: Decision;
  readonly reasons: readonly Reason[];
  readonly model: { readonly name: string; readonly version: string };
  /**
   * Who produced the decision: the local ONNX model (`local`), the local model combined with an LLM verdict
   * (`openai`), or the local model after an escalation failed or was skipped (`local-fallback`).
   */
  readonly source: ScoreSource;
  /** Present on escalated payments only (docs/escalation.md). */
  readonly escalation?: EscalationInfo;
  /** How the user context was obtained. */
  readonly cache: CacheStatus;
  readonly timing: RunTiming;
  /** The rules that fired (with a ruleset; docs/decisioning.md). */
  readonly rules?: readonly { readonly id: string; readonly action: Action }[];
  /** The ruleset that decided. */
  readonly ruleset?: { readonly name: string; readonly version: string };
  /** The merchant profile whose thresholds applied. */
  readonly profile?: { readonly id: string };
  /** Rules whose expression failed at run time (the decision failed closed to at least review). */
  readonly ruleErrors?: readonly string[];
}

/** Options for one scoring call. */
export interface ScoreOptions {
  /** Deadline, ms from `arrivedAt`; default the engine's (`REQUEST_DEADLINE_MS`). */
  readonly deadlineMs?: number;
  /** When the request arrived at the engine (admission), on the scorer's clock, ms; default: when scoring starts. */
  readonly arrivedAt?: number;
  /** Budget of each context lookup's store round trip, ms; default the provider's (`REDIS_TIMEOUT_MS`). */
  readonly contextTimeoutMs?: number;
}

/** Routes each request to a model version (canary) and shadow-scores a sample (`TrafficRouter`). */
export interface RequestRouter {
  /** A lease on the version that serves `userId`. */
  acquire(userId: string): Lease;
  /** Scores `row` on the candidate too, off the response path, for a sample of requests. */
  shadow(key: string, row: Float32Array, served: { readonly version: string; readonly score: number }): void;
}

/** A step after local scoring (the LLM escalation): returns the final result for a locally scored payment. */
export interface ResultReviewer {
  /** Never throws; returns `local` itself when the payment is not reviewed. */
  review(event: PaymentEvent, local: ScoreResult): Promise<ScoreResult>;
}

/** Events a {@link Scorer} emits (telemetry counts them; the composition root logs them). */
export interface ScorerEvents {
  /**
   * The model gave a score that is not a finite number in [0, 1] (or none); the result is `review`.
   * Carries no payment data: the model version, what was wrong, and the rows of the call.
   */
  invalidScore(e: { model: string; modelVersion: string; kind: InvalidScoreKind; rows: number }): void;
  /**
   * A payment was decided (after the escalation, if any): what the decision log and the drift monitor read.
   * `row` is the feature vector in the manifest's order; it must not be kept past the call (copy it).
   */
  decided(e: DecidedPayment): void;
}

/** One decided payment, as {@link ScorerEvents.decided} reports it. */
export interface DecidedPayment {
  readonly event: PaymentEvent;
  readonly row: Float32Array;
  /** The velocity counters the features were computed from (counted before this payment). */
  readonly velocity: Velocity;
  readonly manifest: ModelManifest;
  readonly result: ScoreResult;
  /** The list memberships the deciding ruleset used (from its prefetch); absent without a ruleset. */
  readonly lists?: Readonly<Record<string, boolean>>;
}

/** A local result with what it was computed from (the inputs of {@link ScorerEvents.decided}). */
interface Scored {
  readonly result: ScoreResult;
  readonly row: Float32Array;
  readonly velocity: Velocity;
  readonly manifest: ModelManifest;
  readonly lists?: Readonly<Record<string, boolean>>;
}

/** Dependencies of a {@link Scorer}. */
export interface ScorerDeps {
  readonly sessions: SessionManager;
  /** Per-request version routing; default: every request on the active version. */
  readonly router?: RequestRouter;
  readonly context: ContextProvider;
  /** Monotonic clock, ms. Default `performance.now`. */
  readonly now?: () => number;
  /** Default inference deadline, ms. */
  readonly deadlineMs: number;
  /** Rules, lists and merchant profiles beside the model; default none (the manifest's thresholds decide). */
  readonly decisioning?: Decisioning;
  /** Reviews each local result (the LLM escalation); default none. */
  readonly escalator?: ResultReviewer;
  readonly on?: Partial<ScorerEvents>;
}

/** The scoring pipeline: context → features → inference → decision → reasons. */
export class Scorer {
  private readonly now: () => number;
  constructor(private readonly deps: ScorerDeps) {
    this.now = deps.now ?? (() => performance.now());
  }

  /** Scores one validated payment event, then lets the escalator review the local result. */
  async score(event: PaymentEvent, options: ScoreOptions = {}): Promise<ScoreResult> {
    const local = await this.scoreLocal(event, options);
    const result =
      this.deps.escalator === undefined ? local.result : await this.deps.escalator.review(event, local.result);
    this.decided(event, local, result);
    return result;
  }

  private decided(event: PaymentEvent, local: Scored, result: ScoreResult): void {
    const on = this.deps.on?.decided;
    if (on !== undefined) on({ ...local, event, result }); // with the memberships the ruleset used, if any
  }

  /**
   * Scores validated events in one inference call, then lets the escalator review each local result.
   * @returns one result per event, in order; every result carries the same timing.
   */
  async scoreBatch(events: readonly PaymentEvent[], options: ScoreOptions = {}): Promise<ScoreResult[]> {
    const local = await this.scoreBatchLocal(events, options);
    const escalator = this.deps.escalator;
    const results =
      escalator === undefined
        ? local.map((s) => s.result)
        : await Promise.all(local.map((s, i) => escalator.review(events[i] as PaymentEvent, s.result)));
    results.forEach((r, i) => this.decided(events[i] as PaymentEvent, local[i] as Scored, r));
    return results;
  }

  /** The local model's result for one event. */
  private async scoreLocal(event: PaymentEvent, options: ScoreOptions = {}): Promise<Scored> {
    const arrivedAt = options.arrivedAt ?? this.now();
    const deadline = arrivedAt + (options.deadlineMs ?? this.deps.deadlineMs);
    const preparing = this.deps.decisioning?.prepare(event); // list lookups beside the context lookup
    const { context, cache } = await this.deps.context.lookup(event);
    const prepared = await preparing;
    const row = featurize(event, context, new Float32Array(FEATURE_COUNT));
    const lease = this.acquire(event.userId);
    try {
      const { scores, timing } = await lease.backend.run(row, 1, { deadline, arrivedAt });
      const score = this.checked(scores[0], lease.manifest, 1);
      this.deps.router?.shadow(event.transactionId, row, { version: lease.manifest.version, score });
      const rules = this.rules(prepared, event, row, context.velocity, score, lease.manifest);
      const result = toResult(event, row, score, lease.manifest, cache, timing, rules);
      const lists = rules === undefined ? {} : { lists: rules.lists };
      return { result, row, velocity: context.velocity, manifest: lease.manifest, ...lists };
    } finally {
      lease.release();
    }
  }

  /** The score, or NaN (reported as an `invalidScore` event) when it is missing, not finite or outside [0, 1]. */
  private checked(score: number | undefined, manifest: ModelManifest, rows: number): number {
    const kind = invalidScoreKind(score);
    if (kind === undefined) return score as number;
    this.deps.on?.invalidScore?.({ model: manifest.name, modelVersion: manifest.version, kind, rows });
    return Number.NaN;
  }

  /** The ruleset's decision, when one is active. */
  private rules(
    prepared: Prepared | undefined,
    event: PaymentEvent,
    row: Float32Array,
    velocity: Velocity,
    score: number,
    manifest: ModelManifest,
  ): RulesetDecision | undefined {
    if (prepared === undefined) return undefined;
    const features: Record<string, number> = {};
    FEATURE_NAMES.forEach((n, i) => (features[n] = row[i] ?? 0));
    return (this.deps.decisioning as Decisioning).decide(prepared, {
      event,
      features,
      velocity: velocity as unknown as Readonly<Record<string, number>>,
      score: Number.isFinite(score) ? score : null,
      fallbackThresholds: manifest.thresholds,
    });
  }

  private acquire(userId: string): Lease {
    return this.deps.router?.acquire(userId) ?? this.deps.sessions.acquire();
  }

  /** The local model's results for validated events, in one inference call (the micro-batcher splits it as needed). */
  private async scoreBatchLocal(events: readonly PaymentEvent[], options: ScoreOptions = {}): Promise<Scored[]> {
    if (events.length === 0) return [];
    const arrivedAt = options.arrivedAt ?? this.now();
    const deadline = arrivedAt + (options.deadlineMs ?? this.deps.deadlineMs);
    const budget = options.contextTimeoutMs === undefined ? {} : { timeoutMs: options.contextTimeoutMs };
    const decisioning = this.deps.decisioning;
    const preparing = decisioning === undefined ? undefined : Promise.all(events.map((e) => decisioning.prepare(e)));
    const lookups = await Promise.all(events.map((e) => this.deps.context.lookup(e, budget)));
    const prepared = await preparing;
    const input = new Float32Array(events.length * FEATURE_COUNT);
    events.forEach((e, i) => featurize(e, (lookups[i] as ContextLookup).context, input, i * FEATURE_COUNT));
    const leases: Lease[] = [];
    try {
      // one inference call per version (events of canary users go to the candidate)
      const groups = new Map<Lease['backend'], number[]>();
      for (const e of events) {
        const lease = this.acquire(e.userId);
        leases.push(lease);
        const g = groups.get(lease.backend);
        if (g === undefined) groups.set(lease.backend, [leases.length - 1]);
        else g.push(leases.length - 1);
      }
      const results = new Array<Scored>(events.length);
      const row = (i: number): Float32Array => input.subarray(i * FEATURE_COUNT, (i + 1) * FEATURE_COUNT);
      await Promise.all(
        [...groups.values()].map(async (at) => {
          const lease = leases[at[0] as number] as Lease;
          const part = at.length === events.length ? input : new Float32Array(at.length * FEATURE_COUNT);
          if (part !== input) at.forEach((i, k) => part.set(row(i), k * FEATURE_COUNT));
          const { scores, timing } = await lease.backend.run(part, at.length, { deadline, arrivedAt });
          at.forEach((i, k) => {
            const e = events[i] as PaymentEvent;
            const score = this.checked(scores[k], lease.manifest, at.length);
            this.deps.router?.shadow(e.transactionId, row(i), { version: lease.manifest.version, score });
            const lookup = lookups[i] as ContextLookup;
            const rules = this.rules(prepared?.[i], e, row(i), lookup.context.velocity, score, lease.manifest);
            const result = toResult(e, row(i), score, lease.manifest, lookup.cache, timing, rules);
            const lists = rules === undefined ? {} : { lists: rules.lists };
            results[i] = { result, row: row(i), velocity: lookup.context.velocity, manifest: lease.manifest, ...lists };
          });
        }),
      );
      return results;
    } finally {
      for (const l of leases) l.release();
    }
  }
}

function toResult(
  event: PaymentEvent,
  row: Float32Array,
  score: number,
  manifest: ModelManifest,
  cache: CacheStatus,
  timing: RunTiming,
  rules?: RulesetDecision,
): ScoreResult {
  const valid = Number.isFinite(score); // `checked` turned every invalid score into NaN
  const reasons = valid ? topReasons(row, manifest) : [MODEL_OUTPUT_INVALID_REASON];
  const result: ScoreResult = {
    transactionId: event.transactionId,
    score: valid ? Math.round(score * 1e6) / 1e6 : null,
    decision: decide(score, manifest.thresholds),
    reasons,
    model: { name: manifest.name, version: manifest.version },
    source: 'local',
    cache,
    timing,
  };
  if (rules === undefined) return result;
  return {
    ...result,
    decision: rules.decision,
    // the model's reasons first (model_output_invalid stays first when the score is invalid), then the fired rules
    reasons: [
      ...reasons,
      ...rules.rules.map((r) => ({ code: `rule:${r.id}`, contribution: 0, description: r.description })),
    ],
    rules: rules.rules.map((r) => ({ id: r.id, action: r.action })),
    ruleset: rules.ruleset,
    profile: rules.profile,
    ...(rules.errors.length === 0 ? {} : { ruleErrors: rules.errors.map((e) => e.ruleId) }),
  };
}
