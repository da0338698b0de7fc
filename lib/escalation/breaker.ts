import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleAll,
  type CircuitBreakerPolicy,
  type IBackoff,
  type IHalfOpenAfterBackoffContext,
} from 'cockatiel';
import { EscalationFailure, MAX_RETRY_AFTER_MS } from './failure';
import type { BreakerState, EscalationEvents } from './types';

/** Consecutive failures that open the breaker. */
export const BREAKER_FAILURES = 5;

/** Options of an {@link EscalationBreaker}. */
export interface EscalationBreakerOptions {
  /** Least time the breaker stays open, ms (`ESCALATION_BREAKER_COOLDOWN_MS`). */
  readonly cooldownMs: number;
  /** Consecutive failures that open it; default {@link BREAKER_FAILURES}. */
  readonly failures?: number;
  readonly on?: Partial<Pick<EscalationEvents, 'breakerStateChanged'>>;
}

const STATE: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  [CircuitState.Isolated]: 'open',
};

/**
 * The escalation's circuit breaker (cockatiel 3): opens after 5 consecutive failures of any kind
 * (timeouts, 429s, 5xx, invalid output, ...); stays open for `max(cooldown, Retry-After of the failure that
 * opened it, capped at 5 min)`; then lets one probe through (half-open): success closes it, failure opens
 * it again. Callers must check {@link admits} first: while open, or while the probe is in flight, nothing
 * is sent. cockatiel reads `Date.now()` for the open period (tests mock `Date`).
 */
export class EscalationBreaker {
  private readonly policy: CircuitBreakerPolicy;
  private previous: BreakerState = 'closed';
  private lastOpenForMs = 0;
  /** When the current open period ends (`Date.now()` ms, as cockatiel measures it). */
  private openUntil = 0;

  constructor(private readonly options: EscalationBreakerOptions) {
    const openFor = (ctx: IHalfOpenAfterBackoffContext): IBackoff<IHalfOpenAfterBackoffContext> => {
      const err = 'error' in ctx.result ? ctx.result.error : undefined;
      const retryAfter = err instanceof EscalationFailure ? (err.extra.retryAfterMs ?? 0) : 0;
      const duration = Math.max(options.cooldownMs, Math.min(retryAfter, MAX_RETRY_AFTER_MS));
      this.lastOpenForMs = duration;
      this.openUntil = Date.now() + duration; // cockatiel stamps `openedAt` right after asking for the duration
      return { duration, next: openFor };
    };
    this.policy = circuitBreaker(handleAll, {
      halfOpenAfter: { next: openFor },
      breaker: new ConsecutiveBreaker(options.failures ?? BREAKER_FAILURES),
    });
    this.policy.onStateChange((s) => {
      const state = STATE[s];
      const previous = this.previous;
      this.previous = state;
      options.on?.breakerStateChanged?.({
        state,
        previous,
        ...(state === 'open' ? { openForMs: this.lastOpenForMs } : {}),
      });
    });
  }

  /** The current state (`open` stays `open` until a call after the cooldown turns it half-open). */
  get state(): BreakerState {
    return STATE[this.policy.state];
  }

  /** Whether a call may go now: closed, or open with the open period over (it becomes the probe). Never while the probe is in flight. */
  admits(): boolean {
    const s = this.policy.state;
    return s === CircuitState.Closed || (s === CircuitState.Open && Date.now() >= this.openUntil);
  }

  /**
   * Runs `fn` through the breaker.
   * @throws EscalationFailure `breaker_open` (nothing ran) or whatever `fn` threw.
   */
  async execute<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.admits())
      throw new EscalationFailure('breaker_open', 'the circuit breaker is half-open (probe in flight)');
    try {
      return await this.policy.execute(fn);
    } catch (err) {
      if (err instanceof BrokenCircuitError) throw new EscalationFailure('breaker_open', 'the circuit breaker is open');
      throw err;
    }
  }
}
