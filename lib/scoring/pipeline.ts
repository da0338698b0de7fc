/**
 * The local scoring pipeline, one for a single payment and a batch (a payment is a batch of one): context (+ list
 * prefetch) → featurize → infer (one call per model version) → decide (the ruleset) → result. A batch of one takes
 * the same stages; each stage short-circuits its fan-out (no Promise.all, grouping or row copies) for one event.
 */
import type { ContextLookup, ContextProvider } from '../context/context-provider';
import type { PaymentEvent } from '../domain/payment-event';
import type { Velocity } from '../domain/user-context';
import type { Decisioning, Prepared, RulesetDecision } from '../decisioning/decisioning';
import { featureView, type FeatureView } from '../features/feature-view';
import type { RunTiming } from '../inference/backend';
import type { SessionManager } from '../inference/session-manager';
import type { Lease } from '../inference/version-leases';
import type { ModelManifest } from '../models/manifest';
import { invalidScoreKind, type InvalidScoreKind } from './decision';
import type { CompiledSignals } from '../signals/compiled-signals';
import { toResult, type ScoreResult } from './result';
import type { PaymentAggregates, SignalsStage } from './signals-stage';

/** A local result with what it was computed from (the inputs of the scorer's `decided` event). */
export interface Scored {
  readonly result: ScoreResult;
  readonly row: Float32Array;
  readonly velocity: Velocity;
  readonly manifest: ModelManifest;
  readonly lists?: Readonly<Record<string, boolean>>;
  /** The signals version that served the payment and its signals row (in the version's `names` order). */
  readonly signals?: { readonly version: CompiledSignals; readonly row: Float64Array };
}

/** Routes each request to a model version (canary) and shadow-scores a sample (`TrafficRouter`). */
export interface RequestRouter {
  /** A lease on the version that serves `userId`. */
  acquire(userId: string): Lease;
  /**
   * Scores the payment on the candidate too, off the response path, for a sample of requests; `rowFor` gives its
   * input row for a model version (each version has its own feature list).
   */
  shadow(
    key: string,
    rowFor: (manifest: ModelManifest) => Float32Array,
    served: { readonly version: string; readonly score: number },
  ): void;
}

/** Dependencies of a {@link LocalPipeline} (the scorer's). */
export interface PipelineDeps {
  readonly sessions: SessionManager;
  readonly router?: RequestRouter;
  readonly context: ContextProvider;
  /** The signals stage: serving version per user, aggregates, signals rows, projections. */
  readonly signals: SignalsStage;
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

/** The local scoring pipeline (built once per scorer; a features view once per model version's feature list). */
export class LocalPipeline {
  private readonly views = new WeakMap<ModelManifest, FeatureView>();
  private readonly signals: SignalsStage;
  constructor(private readonly deps: PipelineDeps) {
    this.signals = deps.signals;
  }

  /** The local results of validated events, in order (one inference call per model version). */
  async run(events: readonly PaymentEvent[], limits: RunLimits): Promise<Scored[]> {
    if (events.length === 0) return [];
    const { lookups, prepared, aggregates } = await this.context(events, limits.contextTimeoutMs);
    // signals: each payment's row (aggregates, then the derived features), computed once whatever the model
    const signalRows = events.map((e, i) => {
      const { context } = lookups[i] as ContextLookup;
      const a = aggregates[i] as PaymentAggregates;
      const row = this.signals.row(e, context, a);
      if (a.shadow !== undefined) this.signals.shadow(e, context, a, row);
      return row;
    });
    const leases: Lease[] = [];
    try {
      for (const e of events) leases.push(this.acquire(e.userId)); // canary users go to the candidate
      const results = new Array<Scored>(events.length);
      await this.infer(leases, events, aggregates, signalRows, limits, (i, score, lease, timing, row) => {
        const event = events[i] as PaymentEvent;
        const { context, cache } = lookups[i] as ContextLookup;
        const a = aggregates[i] as PaymentAggregates;
        const signalRow = signalRows[i] as Float64Array;
        const { manifest } = lease;
        this.deps.router?.shadow(event.transactionId, (m) => this.project(a.signals, m, signalRow), {
          version: manifest.version,
          score,
        });
        const rules = this.decide(prepared?.[i], event, row, a, signalRow, context.velocity, score, manifest);
        // aggregates not read (Redis down or slow) read 0: the answer says it was degraded, as for its context
        const result = toResult(event, row, score, manifest, a.degraded ? 'degraded' : cache, timing, rules);
        const lists = rules === undefined ? {} : { lists: rules.lists };
        const signals = { signals: { version: a.signals, row: signalRow } };
        results[i] = { result, row, velocity: context.velocity, manifest, ...lists, ...signals };
      });
      return results;
    } finally {
      for (const l of leases) l.release();
    }
  }

  /** Context stage: each event's user context and aggregates (one round trip), the ruleset's list prefetch beside. */
  private async context(
    events: readonly PaymentEvent[],
    contextTimeoutMs: number | undefined,
  ): Promise<{
    lookups: ContextLookup[];
    prepared: (Prepared | undefined)[] | undefined;
    aggregates: PaymentAggregates[];
  }> {
    const budget = contextTimeoutMs === undefined ? {} : { timeoutMs: contextTimeoutMs };
    const decisioning = this.deps.decisioning;
    const preparing = decisioning === undefined ? undefined : each(events, (e) => decisioning.prepare(e));
    // issued in the same tick as the lookups: auto-pipelining sends them in one write
    const counting = each(events, async (e) => this.signals.aggregates(e, contextTimeoutMs));
    const lookups = await each(events, (e) => this.deps.context.lookup(e, budget));
    return { lookups, prepared: await preparing, aggregates: await counting };
  }

  /** A model version's input row of one payment, projected from its signals row (a new array). */
  private project(signals: CompiledSignals, manifest: ModelManifest, signalRow: Float64Array): Float32Array {
    const out = new Float32Array(manifest.features.length);
    this.signals.projection(signals, manifest)(signalRow, out, 0);
    return out;
  }

  /**
   * Infer stage: one call per model version, each with its own rows (its manifest's feature list projected from
   * the signals rows); `scored(i, …)` for each event's (checked) score and model row.
   */
  private async infer(
    leases: readonly Lease[],
    events: readonly PaymentEvent[],
    aggregates: readonly PaymentAggregates[],
    signalRows: readonly Float64Array[],
    limits: RunLimits,
    scored: (i: number, score: number, lease: Lease, timing: RunTiming, row: Float32Array) => void,
  ): Promise<void> {
    const options = { deadline: limits.deadline, arrivedAt: limits.arrivedAt };
    const run = async (at: readonly number[] | undefined): Promise<void> => {
      const n = at === undefined ? events.length : at.length;
      const index = (k: number): number => (at === undefined ? k : (at[k] as number));
      const lease = leases[index(0)] as Lease;
      const width = lease.manifest.features.length;
      const input = new Float32Array(n * width);
      const rows = new Array<Float32Array>(n);
      for (let k = 0; k < n; k++) {
        const i = index(k);
        const signals = (aggregates[i] as PaymentAggregates).signals;
        this.signals.projection(signals, lease.manifest)(signalRows[i] as Float64Array, input, k * width);
        rows[k] = n === 1 ? input : input.subarray(k * width, (k + 1) * width);
      }
      const { scores, timing } = await lease.backend.run(input, n, options);
      for (let k = 0; k < n; k++)
        scored(index(k), this.checked(scores[k], lease.manifest, n), lease, timing, rows[k] as Float32Array);
    };
    const groups = groupByBackend(leases);
    if (groups === undefined) await run(undefined);
    else await Promise.all(groups.map(run));
  }

  /** The score, or NaN (reported as `invalidScore`) when it is missing, not finite or outside [0, 1]. */
  private checked(score: number | undefined, manifest: ModelManifest, rows: number): number {
    const kind = invalidScoreKind(score);
    if (kind === undefined) return score as number;
    this.deps.invalidScore?.({ model: manifest.name, modelVersion: manifest.version, kind, rows });
    return Number.NaN;
  }

  /**
   * Decide stage: the ruleset's decision, when one is active; the rules read the model row through its features
   * view and the signals row through the signals version's view.
   */
  private decide(
    prepared: Prepared | undefined,
    event: PaymentEvent,
    row: Float32Array,
    a: PaymentAggregates,
    signalRow: Float64Array,
    velocity: Velocity,
    score: number,
    manifest: ModelManifest,
  ): RulesetDecision | undefined {
    if (prepared === undefined) return undefined;
    const decisioning = this.deps.decisioning as Decisioning;
    const decide = (features: Readonly<Record<string, number>>, signals?: Readonly<Record<string, number>>) =>
      decisioning.decide(prepared, {
        event,
        features,
        ...(signals === undefined ? {} : { signals }),
        velocity: velocity as unknown as Readonly<Record<string, number>>,
        score: Number.isFinite(score) ? score : null,
        fallbackThresholds: manifest.thresholds,
      });
    // the signals view is bound only for rulesets that read signals (the candidate's, in shadow, too)
    const readsSignals =
      prepared.ruleset.signalsUsed.length > 0 || (prepared.shadow?.ruleset.signalsUsed.length ?? 0) > 0;
    return this.viewOf(manifest).with(row, (features) =>
      readsSignals ? this.signals.view(a.signals).with(signalRow, (s) => decide(features, s)) : decide(features),
    );
  }

  private viewOf(manifest: ModelManifest): FeatureView {
    let v = this.views.get(manifest);
    if (v === undefined) this.views.set(manifest, (v = featureView(manifest.features.map((f) => f.name))));
    return v;
  }

  private acquire(userId: string): Lease {
    return this.deps.router?.acquire(userId) ?? this.deps.sessions.acquire();
  }
}
