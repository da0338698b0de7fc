import type { PaymentEvent } from '../domain/payment-event';
import type { Velocity } from '../domain/user-context';
import type { Decisioning } from '../decisioning/decisioning';
import type { SessionManager } from '../inference/session-manager';
import type { ModelManifest } from '../models/manifest';
import type { ContextProvider } from '../context/context-provider';
import type { InvalidScoreKind } from './decision';
import { LocalPipeline, type RequestRouter, type Scored } from './pipeline';
import type { ScoreResult } from './result';
import { ServedSignals } from '../signals/signals-serving';
import { loadShippedSignalsSync } from '../signals/shipped-signals';
import { SignalsStage, type SignalsStageDeps } from './signals-stage';

export type { ScoreResult } from './result';
export type { RequestRouter } from './pipeline';

/** Options for one scoring call. */
export interface ScoreOptions {
  /** Deadline, ms from `arrivedAt`; default the engine's (`REQUEST_DEADLINE_MS`). */
  readonly deadlineMs?: number;
  /** When the request arrived at the engine (admission), on the scorer's clock, ms; default: when scoring starts. */
  readonly arrivedAt?: number;
  /** Budget of each context lookup's store round trip, ms; default the provider's (`REDIS_TIMEOUT_MS`). */
  readonly contextTimeoutMs?: number;
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
  /** The signals version that served the payment and its signals row (in the version's `names` order). */
  readonly signals?: Scored['signals'];
}

/** Dependencies of a {@link Scorer}. */
export interface ScorerDeps {
  readonly sessions: SessionManager;
  /** Per-request version routing; default: every request on the active version. */
  readonly router?: RequestRouter;
  readonly context: ContextProvider;
  /**
   * The signals: the serving version per user, and the aggregate store (absent: aggregates read 0). Default: the
   * shipped signals version (`signals/default`), without a store.
   */
  readonly signals?: SignalsStageDeps;
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

let shipped: SignalsStageDeps | undefined;
/** The stage's dependencies when none are given: the shipped signals version for every user, no aggregate store. */
function shippedSignalsOnly(): SignalsStageDeps {
  if (shipped === undefined) {
    shipped = { source: { current: new ServedSignals(loadShippedSignalsSync()) }, timeoutMs: 25 };
  }
  return shipped;
}

/**
 * The scorer: the local pipeline (`pipeline.ts`: context → features → infer → decide → result), then the
 * escalator's review of each local result. One payment is a batch of one: {@link Scorer.score} and
 * {@link Scorer.scoreBatch} run the same code with the same options.
 */
export class Scorer {
  private readonly now: () => number;
  private readonly pipeline: LocalPipeline;
  constructor(private readonly deps: ScorerDeps) {
    this.now = deps.now ?? (() => performance.now());
    const invalidScore = deps.on?.invalidScore;
    this.pipeline = new LocalPipeline({
      sessions: deps.sessions,
      context: deps.context,
      signals: new SignalsStage(deps.signals ?? shippedSignalsOnly()),
      ...(deps.router === undefined ? {} : { router: deps.router }),
      ...(deps.decisioning === undefined ? {} : { decisioning: deps.decisioning }),
      ...(invalidScore === undefined ? {} : { invalidScore: (e) => invalidScore(e) }),
    });
  }

  /** Scores one validated payment event (a batch of one), then lets the escalator review the local result. */
  async score(event: PaymentEvent, options: ScoreOptions = {}): Promise<ScoreResult> {
    return (await this.scoreBatch([event], options))[0] as ScoreResult;
  }

  /**
   * Scores validated events in one inference call per model version, then lets the escalator review each local
   * result.
   * @returns one result per event, in order; every result of one inference call carries the same timing.
   */
  async scoreBatch(events: readonly PaymentEvent[], options: ScoreOptions = {}): Promise<ScoreResult[]> {
    if (events.length === 0) return [];
    const arrivedAt = options.arrivedAt ?? this.now();
    const local = await this.pipeline.run(events, {
      arrivedAt,
      deadline: arrivedAt + (options.deadlineMs ?? this.deps.deadlineMs),
      ...(options.contextTimeoutMs === undefined ? {} : { contextTimeoutMs: options.contextTimeoutMs }),
    });
    const results = await this.review(events, local);
    const on = this.deps.on?.decided;
    // with the memberships the ruleset used, if any
    if (on !== undefined)
      local.forEach((s, i) => on({ ...s, event: events[i] as PaymentEvent, result: results[i] as ScoreResult }));
    return results;
  }

  /** The escalator's review of each local result (no Promise.all for one). */
  private async review(events: readonly PaymentEvent[], local: readonly Scored[]): Promise<ScoreResult[]> {
    const escalator = this.deps.escalator;
    if (escalator === undefined) return local.map((s) => s.result);
    if (local.length === 1) return [await escalator.review(events[0] as PaymentEvent, (local[0] as Scored).result)];
    return Promise.all(local.map((s, i) => escalator.review(events[i] as PaymentEvent, s.result)));
  }
}
