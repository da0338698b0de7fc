/**
 * The local scoring pipeline, one for a single payment and a batch (a payment is a batch of one): context (+ list
 * prefetch) → featurize → infer (one call per model version) → decide (the ruleset) → result. A batch of one takes
 * the same stages; each stage short-circuits its fan-out (no Promise.all, grouping or row copies) for one event.
 */
import type { ContextLookup, ContextProvider } from '../context/context-provider';
import type { PaymentEvent } from '../domain/payment-event';
import type { Velocity } from '../domain/user-context';
import type { Decisioning, Prepared, RulesetDecision } from '../decisioning/decisioning';
import { featureView } from '../features/feature-view';
import { featurize, FEATURE_COUNT, FEATURE_NAMES } from '../features/featurizer';
import type { RunTiming } from '../inference/backend';
import type { SessionManager } from '../inference/session-manager';
import type { Lease } from '../inference/version-leases';
import type { ModelManifest } from '../models/manifest';
import { invalidScoreKind, type InvalidScoreKind } from './decision';
import { toResult, type ScoreResult } from './result';

/** A local result with what it was computed from (the inputs of the scorer's `decided` event). */
export interface Scored {
  readonly result: ScoreResult;
  readonly row: Float32Array;
  readonly velocity: Velocity;
  readonly manifest: ModelManifest;
  readonly lists?: Readonly<Record<string, boolean>>;
}

/** Routes each request to a model version (canary) and shadow-scores a sample (`TrafficRouter`). */
export interface RequestRouter {
  /** A lease on the version that serves `userId`. */
  acquire(userId: string): Lease;
  /** Scores `row` on the candidate too, off the response path, for a sample of requests. */
  shadow(key: string, row: Float32Array, served: { readonly version: string; readonly score: number }): void;
}

/** Dependencies of a {@link LocalPipeline} (the scorer's). */
export interface PipelineDeps {
  readonly sessions: SessionManager;
  readonly router?: RequestRouter;
  readonly context: ContextProvider;
  readonly decisioning?: Decisioning;
  /** The model gave no valid score (see the scorer's `invalidScore` event). */
  readonly invalidScore?: (e: { model: string; modelVersion: string; kind: InvalidScoreKind; rows: number }) => void;
}

/** The time limits of one call. */
export interface RunLimits {
  readonly arrivedAt: number;
  readonly deadline: number;
  /** Budget of each context lookup's store round trip, ms (absent: the provider's). */
  readonly contextTimeoutMs?: number;
}

/** `fn` over `items` with one promise per item; no Promise.all for one item. */
async function each<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  return items.length === 1 ? [await fn(items[0] as T)] : Promise.all(items.map(fn));
}

/** Indexes of the leases by backend; `undefined` when they all share the first one's (always for one lease). */
function groupByBackend(leases: readonly Lease[]): number[][] | undefined {
  const first = leases[0]?.backend;
  if (leases.every((l) => l.backend === first)) return undefined;
  const groups = new Map<Lease['backend'], number[]>();
  leases.forEach((l, i) => {
    const g = groups.get(l.backend);
    if (g === undefined) groups.set(l.backend, [i]);
    else g.push(i);
  });
  return [...groups.values()];
}

/** The local scoring pipeline (built once per scorer; the features view once per feature list). */
export class LocalPipeline {
  private readonly features = featureView(FEATURE_NAMES);
  constructor(private readonly deps: PipelineDeps) {}

  /** The local results of validated events, in order (one inference call per model version). */
  async run(events: readonly PaymentEvent[], limits: RunLimits): Promise<Scored[]> {
    if (events.length === 0) return [];
    const { lookups, prepared } = await this.context(events, limits.contextTimeoutMs);
    const input = new Float32Array(events.length * FEATURE_COUNT);
    // featurize: the row of a batch of one is the input itself
    const rows = events.map((e, i) => {
      const at = i * FEATURE_COUNT;
      featurize(e, (lookups[i] as ContextLookup).context, input, at);
      return events.length === 1 ? input : input.subarray(at, at + FEATURE_COUNT);
    });
    const leases: Lease[] = [];
    try {
      for (const e of events) leases.push(this.acquire(e.userId)); // canary users go to the candidate
      const results = new Array<Scored>(events.length);
      await this.infer(leases, input, rows, limits, (i, score, lease, timing) => {
        const event = events[i] as PaymentEvent;
        const row = rows[i] as Float32Array;
        const { context, cache } = lookups[i] as ContextLookup;
        const { manifest } = lease;
        this.deps.router?.shadow(event.transactionId, row, { version: manifest.version, score });
        const rules = this.decide(prepared?.[i], event, row, context.velocity, score, manifest);
        const result = toResult(event, row, score, manifest, cache, timing, rules);
        const lists = rules === undefined ? {} : { lists: rules.lists };
        results[i] = { result, row, velocity: context.velocity, manifest, ...lists };
      });
      return results;
    } finally {
      for (const l of leases) l.release();
    }
  }

  /** Context stage: each event's user context, with the ruleset's list prefetch beside it. */
  private async context(
    events: readonly PaymentEvent[],
    contextTimeoutMs: number | undefined,
  ): Promise<{ lookups: ContextLookup[]; prepared: (Prepared | undefined)[] | undefined }> {
    const budget = contextTimeoutMs === undefined ? {} : { timeoutMs: contextTimeoutMs };
    const decisioning = this.deps.decisioning;
    const preparing = decisioning === undefined ? undefined : each(events, (e) => decisioning.prepare(e));
    const lookups = await each(events, (e) => this.deps.context.lookup(e, budget));
    return { lookups, prepared: await preparing };
  }

  /** Infer stage: one call per model version; `scored(i, …)` for each event's (checked) score. */
  private async infer(
    leases: readonly Lease[],
    input: Float32Array,
    rows: readonly Float32Array[],
    limits: RunLimits,
    scored: (i: number, score: number, lease: Lease, timing: RunTiming) => void,
  ): Promise<void> {
    const options = { deadline: limits.deadline, arrivedAt: limits.arrivedAt };
    const groups = groupByBackend(leases);
    if (groups === undefined) {
      const lease = leases[0] as Lease;
      const { scores, timing } = await lease.backend.run(input, rows.length, options);
      for (let i = 0; i < rows.length; i++)
        scored(i, this.checked(scores[i], lease.manifest, rows.length), lease, timing);
      return;
    }
    await Promise.all(
      groups.map(async (at) => {
        const lease = leases[at[0] as number] as Lease;
        const part = new Float32Array(at.length * FEATURE_COUNT);
        at.forEach((i, k) => part.set(rows[i] as Float32Array, k * FEATURE_COUNT));
        const { scores, timing } = await lease.backend.run(part, at.length, options);
        at.forEach((i, k) => scored(i, this.checked(scores[k], lease.manifest, at.length), lease, timing));
      }),
    );
  }

  /** The score, or NaN (reported as `invalidScore`) when it is missing, not finite or outside [0, 1]. */
  private checked(score: number | undefined, manifest: ModelManifest, rows: number): number {
    const kind = invalidScoreKind(score);
    if (kind === undefined) return score as number;
    this.deps.invalidScore?.({ model: manifest.name, modelVersion: manifest.version, kind, rows });
    return Number.NaN;
  }

  /** Decide stage: the ruleset's decision, when one is active; the rules read the row through the features view. */
  private decide(
    prepared: Prepared | undefined,
    event: PaymentEvent,
    row: Float32Array,
    velocity: Velocity,
    score: number,
    manifest: ModelManifest,
  ): RulesetDecision | undefined {
    if (prepared === undefined) return undefined;
    const decisioning = this.deps.decisioning as Decisioning;
    return this.features.with(row, (features) =>
      decisioning.decide(prepared, {
        event,
        features,
        velocity: velocity as unknown as Readonly<Record<string, number>>,
        score: Number.isFinite(score) ? score : null,
        fallbackThresholds: manifest.thresholds,
      }),
    );
  }

  private acquire(userId: string): Lease {
    return this.deps.router?.acquire(userId) ?? this.deps.sessions.acquire();
  }
}
