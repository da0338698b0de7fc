import type { UserContext } from '../domain/user-context';
import { NO_HISTORY } from '../domain/user-context';
import type { PaymentEvent } from '../domain/payment-event';

/** How the context of a request was obtained: from a cache tier, from the origin, or degraded (defaults; Redis unavailable). */
export type CacheStatus = 'hit' | 'miss' | 'degraded';

/** The context of one payment and how it was obtained. */
export interface ContextLookup {
  readonly context: UserContext;
  readonly cache: CacheStatus;
  /** Which tier answered a `hit` (`l1` in-process, `l2` Redis); absent otherwise. */
  readonly tier?: 'l1' | 'l2';
}

/** Options of one context lookup. */
export interface LookupOptions {
  /** Budget of the store round trip, ms; default the provider's (`REDIS_TIMEOUT_MS`). */
  readonly timeoutMs?: number;
}

/** Supplies the user context of a payment (profile + velocity) and records the payment for later velocity. */
export interface ContextProvider {
  /**
   * Returns the user's context as it was before this payment, and records the payment (idempotently per
   * `transactionId`) so later payments see it in their velocity. Never throws: degrades to defaults.
   */
  lookup(event: PaymentEvent, options?: LookupOptions): Promise<ContextLookup>;
  dispose(): Promise<void>;
}

/** A provider that knows no user: every payment is scored with the no-history defaults. */
export const noHistoryProvider: ContextProvider = {
  lookup: () => Promise.resolve({ context: NO_HISTORY, cache: 'miss' }),
  dispose: () => Promise.resolve(),
};
