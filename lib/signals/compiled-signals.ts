/**
 * A signals version compiled once (`compile-signals.ts`): what the pipeline, the rules' compile check, the model
 * upload check and training use. Nothing here reads the document per request.
 * @module
 */
import type { PaymentEvent } from '../domain/payment-event';
import type { UserContext } from '../domain/user-context';
import type { AggregateInput, AggregatePlan } from './aggregate-store';
import type { SignalsDocument } from './signals-document';

/** Fills a model's input row from a signals row: `out[offset + j] = signals[index[j]]`. */
export type Projection = (signals: Float64Array, out: Float32Array, offset: number) => void;

export interface CompiledSignals {
  readonly name: string;
  readonly version: string;
  readonly document: SignalsDocument;
  /** Every signal, aggregates first then features, in document order: the order of a signals row. */
  readonly names: readonly string[];
  /** Index of a signal in a signals row, or `undefined`. */
  indexOf(name: string): number | undefined;
  /** A signal's definition in plain words (the console, the manifest's `definition`). */
  definition(name: string): string | undefined;
  /** The aggregates for the store (empty plan when the document declares none). */
  readonly plan: AggregatePlan;
  /** What this payment brings to the aggregates (keys, where filters, values). */
  aggregateInput(event: PaymentEvent, transactionId: string, at: number): AggregateInput;
  /**
   * The signals row of one payment: `aggregates` (plan order, from the store; zeros when degraded) then each
   * feature, computed in document order (a feature may read earlier ones). `out` has `names.length` slots.
   */
  compute(event: PaymentEvent, context: UserContext, aggregates: Float64Array, out: Float64Array): void;
  /**
   * The projection onto a model's feature list. @throws AppError `model_invalid` naming every feature this
   * version does not compute.
   */
  projection(features: readonly string[]): Projection;
}
