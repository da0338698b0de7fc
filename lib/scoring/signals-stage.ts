/**
 * The signals stage of the pipeline: for each payment, the signals version that serves its user (the candidate's
 * canary share, else the active one), its aggregates read and recorded in the store (in the same tick as the
 * context lookup, so both share one round trip per connection), then its signals row (aggregates, then the derived
 * features), and the projection of that row onto each model version's feature list. Everything per version is
 * compiled once (the projections are kept per signals version and manifest).
 */
import type { UserContext } from '../domain/user-context';
import type { PaymentEvent } from '../domain/payment-event';
import type { ModelManifest } from '../models/manifest';
import type { AggregateInput, AggregatePlan, AggregateStore } from '../signals/aggregate-store';
import type { CompiledSignals, Projection } from '../signals/compiled-signals';
import { BudgetExceededError, withTimeout } from '../platform/with-timeout';
import { featureView, type FeatureView } from '../features/feature-view';

/**
 * One state of the signals served (lib/signals/signals-serving.ts `ServedSignals`): the version of a user, and the
 * aggregates every payment records, the union of the active and candidate versions' (so a candidate's new
 * aggregates warm up on all traffic), mapped back to a version's own plan order.
 */
export interface SignalsSnapshot {
  forUser(userId: string): CompiledSignals;
  readonly plan: AggregatePlan;
  aggregateInput(event: PaymentEvent, transactionId: string, at: number): AggregateInput;
  valuesFor(version: string, union: Float64Array): Float64Array;
  /** The candidate, when this payment falls in its shadow share (and its user is not in its canary share). */
  shadowFor?(userId: string, transactionId: string): CompiledSignals | undefined;
}

/** Where shadowed payments' two rows go (lib/signals/signals-shadow.ts). */
export interface SignalsShadowSink {
  record(
    active: CompiledSignals,
    activeRow: Float64Array,
    candidate: CompiledSignals,
    candidateRow: Float64Array,
  ): void;
}

/** What serves signals (the signals rollout's `SignalsServing`): its current snapshot, swapped atomically. */
export interface SignalsSource {
  readonly current: SignalsSnapshot;
}

/** Why a payment's aggregates read 0: the store timed out, failed, or is not connected. */
export type SignalsDegradedReason = 'timeout' | 'error' | 'unavailable';

/** Dependencies of a {@link SignalsStage}. */
export interface SignalsStageDeps {
  readonly source: SignalsSource;
  /** Where aggregates are counted; absent: they read 0 (and the payment is marked degraded when it has some). */
  readonly store?: () => AggregateStore | undefined;
  /** Wall clock, epoch ms: windows are measured on it, never on the client's timestamp. Default `Date.now`. */
  readonly now?: () => number;
  /** Budget of the store round trip, ms (`REDIS_TIMEOUT_MS`). */
  readonly timeoutMs: number;
  readonly degraded?: (e: { readonly reason: SignalsDegradedReason }) => void;
  /** Where the shadow share's rows go; absent: no shadow is computed. */
  readonly shadow?: SignalsShadowSink;
}

/** A payment's signals: its version and its aggregates (plan order; zeros when degraded). */
export interface PaymentAggregates {
  readonly signals: CompiledSignals;
  readonly aggregates: Float64Array;
  readonly degraded: boolean;
  /** The candidate in shadow for this payment, and its aggregates. */
  readonly shadow?: { readonly signals: CompiledSignals; readonly aggregates: Float64Array };
}

const NONE = new Float64Array(0);

/** The signals stage (one per pipeline). */
export class SignalsStage {
  private readonly now: () => number;
  private readonly projections = new WeakMap<CompiledSignals, WeakMap<ModelManifest, Projection>>();
  private readonly views = new WeakMap<CompiledSignals, FeatureView>();
  constructor(private readonly deps: SignalsStageDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The serving version of the payment's user and its aggregates (never throws: degrades to zeros). */
  aggregates(event: PaymentEvent, timeoutMs: number | undefined): Promise<PaymentAggregates> | PaymentAggregates {
    const snapshot = this.deps.source.current; // one state for the whole payment
    const signals = snapshot.forUser(event.userId);
    const shadow = this.deps.shadow === undefined ? undefined : snapshot.shadowFor?.(event.userId, event.transactionId);
    if (snapshot.plan.aggregates.length === 0)
      return {
        signals,
        aggregates: NONE,
        degraded: false,
        ...(shadow === undefined ? {} : { shadow: { signals: shadow, aggregates: NONE } }),
      };
    const store = this.deps.store?.();
    if (store === undefined) return this.zeros(signals, 'unavailable');
    const input = snapshot.aggregateInput(event, event.transactionId, this.now());
    return withTimeout(store.record(snapshot.plan, input), timeoutMs ?? this.deps.timeoutMs).then(
      (union) => ({
        signals,
        aggregates: snapshot.valuesFor(signals.version, union),
        degraded: false,
        ...(shadow === undefined
          ? {}
          : { shadow: { signals: shadow, aggregates: snapshot.valuesFor(shadow.version, union) } }),
      }),
      (err: unknown) => this.zeros(signals, err instanceof BudgetExceededError ? 'timeout' : 'error'),
    );
  }

  /**
   * For a payment in the candidate's shadow share: its candidate row, computed after the answer (setImmediate) and
   * handed to the shadow sink beside the row that decided. Never throws.
   */
  shadow(event: PaymentEvent, context: UserContext, a: PaymentAggregates, row: Float64Array): void {
    const s = a.shadow;
    const sink = this.deps.shadow;
    if (s === undefined || sink === undefined) return;
    setImmediate(() => {
      try {
        const out = new Float64Array(s.signals.names.length);
        s.signals.compute(event, context, s.aggregates, out);
        sink.record(a.signals, row, s.signals, out);
      } catch {
        // a shadow never fails a payment
      }
    });
  }

  /** The payment's signals row (a new array: the decision record keeps it). */
  row(event: PaymentEvent, context: UserContext, a: PaymentAggregates): Float64Array {
    const out = new Float64Array(a.signals.names.length);
    a.signals.compute(event, context, a.aggregates, out);
    return out;
  }

  /**
   * The projection of `signals` rows onto `manifest`'s features (compiled once per pair).
   * @throws AppError `model_invalid` naming the features the version does not compute (the rollout refuses such a
   * pair before it serves: a bug otherwise, and the payment fails rather than being decided on missing inputs).
   */
  projection(signals: CompiledSignals, manifest: ModelManifest): Projection {
    let byManifest = this.projections.get(signals);
    if (byManifest === undefined) this.projections.set(signals, (byManifest = new WeakMap()));
    let p = byManifest.get(manifest);
    if (p === undefined) {
      p = signals.projection(manifest.features.map((f) => f.name));
      byManifest.set(manifest, p);
    }
    return p;
  }

  /** The rules' view of a version's signals rows (`signals.<name>`), built once per version. */
  view(signals: CompiledSignals): FeatureView {
    let v = this.views.get(signals);
    if (v === undefined) this.views.set(signals, (v = featureView(signals.names)));
    return v;
  }

  private zeros(signals: CompiledSignals, reason: SignalsDegradedReason): PaymentAggregates {
    this.deps.degraded?.({ reason });
    return { signals, aggregates: new Float64Array(signals.plan.aggregates.length), degraded: true };
  }
}
