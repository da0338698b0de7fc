import type { ContextCache, ContextKey } from './cache-tier';
import type { CachedContext } from './context-value';
import type { InvalidationBus } from './invalidation';
import type { L1Cache } from './l1-cache';

/** Parts of a {@link TieredContextCache}. */
export interface TieredParts {
  readonly l1: L1Cache;
  readonly l2: ContextCache;
  /** Tells other instances to drop their L1 entries; and tells this one. Optional (single instance). */
  readonly bus?: InvalidationBus;
}

/**
 * L1 over L2. Reads try L1, then L2 (and fill L1). Writes go to L2, then L1. Deletes drop both tiers here
 * and publish an invalidation so other instances drop their L1 entry. `epoch` increases on every
 * invalidation seen (local or remote), so a loader can tell that its result may be stale.
 */
export class TieredContextCache implements ContextCache {
  private epochValue = 0;
  constructor(private readonly parts: TieredParts) {
    parts.bus?.subscribe({
      invalidate: (m) => {
        this.epochValue++;
        if (m.key === undefined) parts.l1.removeUser(m.userId);
        else parts.l1.removeKey(m.key);
      },
      resync: () => {
        this.epochValue++;
        parts.l1.clear();
      },
    });
  }

  /** Counts invalidations seen; compare before and after a load to know whether to cache its result. */
  get epoch(): number {
    return this.epochValue;
  }

  /** The L1 tier (synchronous peeks on the request and degraded paths). */
  get l1(): L1Cache {
    return this.parts.l1;
  }

  /** Reads L1, then L2; reports which tier answered. */
  async lookup(key: ContextKey): Promise<{ value: CachedContext; tier: 'l1' | 'l2' } | undefined> {
    const hot = this.parts.l1.peek(key);
    if (hot !== undefined) return { value: hot, tier: 'l1' };
    const epoch = this.epochValue;
    const value = await this.parts.l2.get(key);
    if (value === undefined) return undefined;
    if (epoch === this.epochValue) this.parts.l1.put(key, value);
    return { value, tier: 'l2' };
  }

  async get(key: ContextKey): Promise<CachedContext | undefined> {
    return (await this.lookup(key))?.value;
  }

  async set(key: ContextKey, value: CachedContext): Promise<void> {
    await this.parts.l2.set(key, value);
    this.parts.l1.put(key, value);
  }

  async delete(key: ContextKey): Promise<void> {
    this.epochValue++;
    this.parts.l1.removeKey(key.key);
    await this.parts.l2.delete(key);
    await this.parts.bus?.publish({ userId: key.userId, key: key.key });
  }

  async deleteUser(userId: string): Promise<void> {
    this.epochValue++;
    this.parts.l1.removeUser(userId);
    await this.parts.l2.deleteUser(userId);
    await this.parts.bus?.publish({ userId });
  }
}
