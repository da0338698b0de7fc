import { LRUCache } from 'lru-cache';
import type { CacheTierEvents, ContextCache, ContextKey } from './cache-tier';
import { decodeContext, encodeContext, type CachedContext } from './context-value';

/** Options of a {@link MemoryContextCache}. */
export interface MemoryCacheOptions {
  /** Time to live, ms (same setting as L2: `CONTEXT_L2_TTL_SEC`). */
  readonly ttlMs: number;
  /** Most entries held. Default 100 000. */
  readonly maxEntries?: number;
  /** Most encoded bytes held. Default 64 MiB. */
  readonly maxBytes?: number;
  /** Wall clock, epoch ms. Default `Date.now`. */
  readonly now?: () => number;
  readonly on?: Partial<CacheTierEvents>;
}

/**
 * The in-process stand-in for L2, used when no Redis is configured (`npm start` without settings). It
 * stores the same encoded bytes Redis would, so the codec runs locally too; it is bounded and not shared
 * between processes.
 */
export class MemoryContextCache implements ContextCache {
  private readonly lru: LRUCache<string, { frame: Buffer; userId: string }>;
  private readonly byUser = new Map<string, Set<string>>();
  private readonly now: () => number;

  constructor(private readonly options: MemoryCacheOptions) {
    this.now = options.now ?? Date.now;
    this.lru = new LRUCache({
      max: options.maxEntries ?? 100_000,
      maxSize: options.maxBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (e, k) => e.frame.length + k.length * 2 + 64,
      dispose: (e, k, reason) => {
        if (reason === 'set') return;
        const keys = this.byUser.get(e.userId);
        keys?.delete(k);
        if (keys?.size === 0) this.byUser.delete(e.userId);
      },
    });
  }

  /** Stores raw bytes under a key as if some writer had (tests of foreign or corrupted values). */
  putRaw(key: ContextKey, frame: Buffer): void {
    this.lru.set(key.key, { frame, userId: key.userId });
  }

  get(key: ContextKey): Promise<CachedContext | undefined> {
    const e = this.lru.get(key.key);
    if (e === undefined) return Promise.resolve(undefined);
    const r = decodeContext(e.frame);
    if (!r.ok) {
      this.options.on?.corrupt?.({ tier: 'l2', reason: r.reason });
      return Promise.resolve(undefined);
    }
    if (this.now() - r.stored.storedAt > this.options.ttlMs) {
      this.lru.delete(key.key);
      return Promise.resolve(undefined);
    }
    return Promise.resolve(r.stored.value);
  }

  set(key: ContextKey, value: CachedContext): Promise<void> {
    this.lru.set(key.key, { frame: encodeContext(value, this.now()), userId: key.userId });
    let keys = this.byUser.get(key.userId);
    if (keys === undefined) this.byUser.set(key.userId, (keys = new Set()));
    keys.add(key.key);
    return Promise.resolve();
  }

  delete(key: ContextKey): Promise<void> {
    this.lru.delete(key.key);
    return Promise.resolve();
  }

  deleteUser(userId: string): Promise<void> {
    for (const k of [...(this.byUser.get(userId) ?? [])]) this.lru.delete(k);
    this.byUser.delete(userId);
    return Promise.resolve();
  }
}
