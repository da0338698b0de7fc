import type { EscalationOutcome, EscalationTrigger } from '../scoring/escalation-info';

/** Circuit breaker states. */
export type BreakerState = 'closed' | 'open' | 'half-open';

/** Typed events of the escalation module (the telemetry module turns them into metrics, the root into logs). */
export interface EscalationEvents {
  /** One escalation decided (every outcome, including `capped` and `breaker_open`). */
  escalated(e: {
    readonly outcome: EscalationOutcome;
    readonly triggers: readonly EscalationTrigger[];
    readonly latencyMs: number;
    readonly promptTokens: number;
    readonly completionTokens: number;
    readonly costUsd: number;
    readonly model: string;
    /** Fixed failure text (never payment data). */
    readonly reason?: string;
  }): void;
  /** The breaker changed state; `openForMs` is how long it stays open when it opens. */
  breakerStateChanged(e: {
    readonly state: BreakerState;
    readonly previous: BreakerState;
    readonly openForMs?: number;
  }): void;
}
