import type { ContextProvider, CacheStatus } from '../context/context-provider';
import { featurize, FEATURE_COUNT } from '../features/featurizer';
import type { RunTiming } from '../inference/backend';
import type { SessionManager } from '../inference/session-manager';
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
}

/** Dependencies of a {@link Scorer}. */
export interface ScorerDeps {
  readonly sessions: SessionManager;
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
    const lease = this.deps.sessions.acquire();
    try {
      const { scores, timing } = await lease.backend.run(row, 1, { deadline });
      const score = scores[0] ?? Number.NaN;
      const { manifest } = lease;
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
    } finally {
      lease.release();
    }
  }
}
