import type { CachedContext } from './context-value';

/** A context cache key and the user it belongs to (for per-user invalidation). */
export interface ContextKey {
  /** Full key, e.g. `scoring:v1:ctx:{user-42}:sess-1` (see `ContextKeys`). */
  readonly key: string;
  readonly userId: string;
}

/**
 * One tier of the context cache (L1 in-process LRU, L2 Redis, the in-process L2 stand-in, or the tiered
 * combination). All share one contract test suite. Values expire `ttl` after they were stored, on the
 * tier's injected clock.
 */
export interface ContextCache {
  /** The value under `key`, or `undefined` when absent, expired, foreign or corrupted (never throws for those). */
  get(key: ContextKey): Promise<CachedContext | undefined>;
  /** Stores a value (overwrites). */
  set(key: ContextKey, value: CachedContext): Promise<void>;
  /** Drops one key. */
  delete(key: ContextKey): Promise<void>;
  /** Drops every key cached for a user (all sessions). */
  deleteUser(userId: string): Promise<void>;
}

/** Events of cache tiers, for telemetry. */
export interface CacheTierEvents {
  /** A stored value could not be read (foreign format, corrupted bytes, bad JSON, bad schema); treated as a miss. */
  corrupt(e: { tier: 'l2'; reason: string }): void;
}
