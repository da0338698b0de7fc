import { LRUCache } from 'lru-cache';
import type { UserProfile } from '../domain/user-context';
import type { ContextCache, ContextKey } from './cache-tier';
import type { CachedContext } from './context-value';

/** Options of an {@link L1Cache}. */
export interface L1Options {
  /** Most entries held (`CONTEXT_L1_MAX_ENTRIES`, default 50 000). */
  readonly maxEntries: number;
  /** Most bytes held, by {@link approxBytes} (`CONTEXT_L1_MAX_BYTES`, default 64 MiB). */
  readonly maxBytes: number;
  /** Time to live of an entry, ms (`CONTEXT_L1_TTL_SEC`, default 30 s; at most L2's). */
  readonly ttlMs: number;
  /** Clock for TTLs, ms. Default `performance.now`. */
  readonly now?: () => number;
}

/** Approximate heap bytes of one entry: what the byte bound counts. */
export function approxBytes(key: string, value: CachedContext): number {
  const p: UserProfile | null = value.profile;
  let n = 96 + key.length * 2;
  if (p !== null) {
    n += 120 + p.homeCountry.length * 2 + p.accountCreatedAt.length * 2;
    for (const d of p.knownDevices) n += 24 + d.length * 2;
  }
  return n;
}

interface Entry {
  readonly value: CachedContext;
  readonly userId: string;
}

/**
 * L1: the in-process LRU of hot keys, bounded by entries and by bytes, with a TTL (≤ L2's). Holds decoded
 * values, so a hit costs one map lookup. Keeps a per-user index for `deleteUser`.
 */
export class L1Cache implements ContextCache {
  private readonly lru: LRUCache<string, Entry>;
  private readonly byUser = new Map<string, Set<string>>();

  constructor(options: L1Options) {
    const now = options.now;
    this.lru = new LRUCache<string, Entry>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      sizeCalculation: (e, key) => approxBytes(key, e.value),
      ttl: options.ttlMs,
      updateAgeOnGet: false,
      // an injected clock is read on every access (lru-cache otherwise caches `now` for 1 ms of real time)
      ...(now === undefined ? {} : { perf: { now }, ttlResolution: 0 }),
      dispose: (e, key, reason) => {
        if (reason !== 'set') this.unindex(e.userId, key);
      },
    });
  }

  /** Synchronous read (the request path and the degraded path use it). */
  peek(key: ContextKey): CachedContext | undefined {
    return this.lru.get(key.key)?.value;
  }

  /** Synchronous write. */
  put(key: ContextKey, value: CachedContext): void {
    this.lru.set(key.key, { value, userId: key.userId });
    let keys = this.byUser.get(key.userId);
    if (keys === undefined) this.byUser.set(key.userId, (keys = new Set()));
    keys.add(key.key);
  }

  /** Drops one key by its full name (also used for remote invalidations). */
  removeKey(key: string): void {
    this.lru.delete(key);
  }

  /** Drops every key of a user. */
  removeUser(userId: string): void {
    const keys = this.byUser.get(userId);
    if (keys === undefined) return;
    for (const k of [...keys]) this.lru.delete(k);
    this.byUser.delete(userId);
  }

  /** Drops everything (e.g. after invalidations may have been missed). */
  clear(): void {
    this.lru.clear();
    this.byUser.clear();
  }

  /** Entries held. */
  get size(): number {
    return this.lru.size;
  }
  /** Bytes held, by {@link approxBytes}. */
  get bytes(): number {
    return this.lru.calculatedSize;
  }

  get(key: ContextKey): Promise<CachedContext | undefined> {
    return Promise.resolve(this.peek(key));
  }
  set(key: ContextKey, value: CachedContext): Promise<void> {
    this.put(key, value);
    return Promise.resolve();
  }
  delete(key: ContextKey): Promise<void> {
    this.removeKey(key.key);
    return Promise.resolve();
  }
  deleteUser(userId: string): Promise<void> {
    this.removeUser(userId);
    return Promise.resolve();
  }

  private unindex(userId: string, key: string): void {
    const keys = this.byUser.get(userId);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) this.byUser.delete(userId);
  }
}
