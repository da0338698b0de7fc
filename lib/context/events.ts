import type { EntraAuthEvents } from '../platform/redis/entra-auth';
import type { CacheTierEvents } from './cache-tier';

/** Why a lookup was degraded. */
export type DegradedReason = 'unavailable' | 'timeout' | 'error' | 'origin';

/**
 * Typed events of the context components. The composition root turns them into logs (and the telemetry
 * module into metrics). None carries a secret, a key name with payment data, or a connection string.
 */
export interface ContextEvents extends CacheTierEvents, EntraAuthEvents {
  /** A lookup answered `cache: "degraded"`: store not connected, over the time budget, failed, or origin failed. */
  degraded(e: { reason: DegradedReason }): void;
  /** The Redis connection became ready, or was lost (the client keeps reconnecting in the background). */
  connection(e: { state: 'ready' | 'lost' }): void;
  /** Setting up the store failed (Key Vault, credential, bad connection string); retried in the background. */
  setupFailed(e: { stage: 'keyvault' | 'entra' | 'connect'; message: string; retryInMs: number }): void;
  /** A background cache write (after an origin load) failed; the next miss loads again. */
  writeFailed(e: { tier: 'l2' }): void;
}
