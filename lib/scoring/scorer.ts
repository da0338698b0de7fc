import type { CacheStatus, ContextLookup, ContextProvider } from '../context/context-provider';
import { featurize, FEATURE_COUNT } from '../features/featurizer';
import type { RunTiming } from '../inference/backend';
import type { Lease, SessionManager } from '../inference/session-manager';
import type { ModelManifest } from '../models/manifest';
import { decide, topReasons, type Decision, type Reason } from './decision';
import type { PaymentEvent } from './event-schema';

/** The result of scoring one payment (HTTP 200 body; Service Bus result body). */
export interface ScoreResult {
  readonly transactionId: string;
  /** Fraud probability in [0, 1], rounded to 6 decimals. */
  readonly score: number;
  readonly decision: Decision;
  readonly reasons: readonly Reason[];
  readonly model: { readonly name: string; readonly version: string };
  /** Who produced the score: the local ONNX model. */
  readonly source: 'local';
  /** How the user context was obtained. */
  readonly cache: CacheStatus;
  readonly timing: RunTiming;
}

/** Options for one scoring call. */
export interface ScoreOptions {
  /** Deadline for the inference, ms from now; default the engine's. */
  readonly deadlineMs?: number;
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
}

/** The scoring pipeline: context → features → inference → decision → reasons. */
export class Scorer {
  private readonly now: () => number;
  constructor(private readonly deps: ScorerDeps) {
    this.now = deps.now ?? (() => performance.now());
  }

  /** Scores one validated payment event. */
  async score(event: PaymentEvent, options: ScoreOptions = {}): Promise<ScoreResult> {
    const deadline = this.now() + (options.deadlineMs ?? this.deps.deadlineMs);
    const { context, cache } = await this.deps.context.lookup(event);
    const row = featurize(event, context, new Float32Array(FEATURE_COUNT));
    const lease = this.acquire(event.userId);
    try {
      const { scores, timing } = await lease.backend.run(row, 1, { deadline });
      const score = scores[0] ?? Number.NaN;
      this.deps.router?.shadow(event.transactionId, row, { version: lease.manifest.version, score });
      return toResult(event, row, score, lease.manifest, cache, timing);
    } finally {
      lease.release();
    }
  }

  private acquire(userId: string): Lease {
    return this.deps.router?.acquire(userId) ?? this.deps.sessions.acquire();
  }

  /**
   * Scores validated events in one inference call (the micro-batcher splits it as needed).
   * @returns one result per event, in order; every result carries the same timing.
   */
  async scoreBatch(events: readonly PaymentEvent[], options: ScoreOptions = {}): Promise<ScoreResult[]> {
    if (events.length === 0) return [];
    const deadline = this.now() + (options.deadlineMs ?? this.deps.deadlineMs);
    const budget = options.contextTimeoutMs === undefined ? {} : { timeoutMs: options.contextTimeoutMs };
    const lookups = await Promise.all(events.map((e) => this.deps.context.lookup(e, budget)));
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
      const results = new Array<ScoreResult>(events.length);
      const row = (i: number): Float32Array => input.subarray(i * FEATURE_COUNT, (i + 1) * FEATURE_COUNT);
      await Promise.all(
        [...groups.values()].map(async (at) => {
          const lease = leases[at[0] as number] as Lease;
          const part = at.length === events.length ? input : new Float32Array(at.length * FEATURE_COUNT);
          if (part !== input) at.forEach((i, k) => part.set(row(i), k * FEATURE_COUNT));
          const { scores, timing } = await lease.backend.run(part, at.length, { deadline });
          at.forEach((i, k) => {
            const e = events[i] as PaymentEvent;
            const score = scores[k] ?? Number.NaN;
            this.deps.router?.shadow(e.transactionId, row(i), { version: lease.manifest.version, score });
            results[i] = toResult(e, row(i), score, lease.manifest, (lookups[i] as ContextLookup).cache, timing);
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
): ScoreResult {
  return {
    transactionId: event.transactionId,
    score: Math.round(score * 1e6) / 1e6,
    decision: decide(score, manifest.thresholds),
    reasons: topReasons(row, manifest),
    model: { name: manifest.name, version: manifest.version },
    source: 'local',
    cache,
    timing,
  };
}
