import type { ScoreResult } from '../scoring/scorer';
import type { PaymentEvent } from '../domain/payment-event';
import { ShareCap } from './share-cap';
import type { EscalationTrigger } from '../scoring/escalation-info';

/** Options of an {@link EscalationPolicy}. */
export interface EscalationPolicyOptions {
  /** A `note` of at least this many characters escalates. */
  readonly noteMinChars: number;
  /** Uncertainty band `[low, high)` of the local score; undefined = the local decision is `review` (the manifest's `[review, decline)`). */
  readonly band: { readonly low: number; readonly high: number } | undefined;
  readonly maxShare: number;
  readonly windowMs: number;
  readonly burst: number;
  /** Monotonic clock, ms. Default `performance.now`. */
  readonly now?: () => number;
}

/** The policy's answer for one payment. */
export type PolicyDecision =
  | { readonly escalate: false; readonly triggers: readonly [] }
  | { readonly escalate: boolean; readonly triggers: readonly EscalationTrigger[] };

/**
 * Which payments escalate: the local score in the uncertainty band, a long `note` (the local model cannot
 * read it), or `"analysis": "deep"`; and at most a share of all payments over a sliding window (explicit
 * requests count against it too). Every payment is counted.
 */
export class EscalationPolicy {
  private readonly cap: ShareCap;
  constructor(private readonly options: EscalationPolicyOptions) {
    this.cap = new ShareCap({
      maxShare: options.maxShare,
      windowMs: options.windowMs,
      burst: options.burst,
      ...(options.now === undefined ? {} : { now: options.now }),
    });
  }

  /** Why this payment would escalate (empty: it does not). Pure: counts nothing. */
  triggers(event: PaymentEvent, local: ScoreResult): EscalationTrigger[] {
    const out: EscalationTrigger[] = [];
    const band = this.options.band;
    // a failed-closed result (score null, decision review) is exactly what the local model cannot judge
    const inBand =
      band === undefined
        ? local.decision === 'review'
        : local.score === null || (local.score >= band.low && local.score < band.high);
    if (inBand) out.push('band');
    if (event.note !== undefined && event.note.length >= this.options.noteMinChars) out.push('note');
    if (event.analysis === 'deep') out.push('requested');
    if (local.rules?.some((r) => r.action === 'escalate') === true) out.push('rule');
    return out;
  }

  /** Counts the payment and decides: `escalate` is true for a candidate admitted under the share cap. */
  decide(event: PaymentEvent, local: ScoreResult): PolicyDecision {
    const triggers = this.triggers(event, local);
    if (triggers.length === 0) {
      this.cap.record();
      return { escalate: false, triggers: [] };
    }
    return { escalate: this.cap.tryAdmit(), triggers };
  }

  /** Payments and escalations in the current window. */
  window(): { readonly total: number; readonly admitted: number } {
    return this.cap.snapshot();
  }
}
