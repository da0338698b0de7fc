/**
 * Where list entries live, and how changes are announced: Redis (shared by every instance; `RedisListStore`)
 * or in-process when no Redis is configured ({@link MemoryListStore}). Both pass one contract suite.
 */

/** One list entry. */
export interface ListEntry {
  readonly value: string;
  /** Epoch ms after which the entry no longer counts; absent = no expiry. */
  readonly expiresAt?: number;
}

/** A page of entries and the cursor of the next one (absent at the end). */
export interface ListPage {
  readonly entries: readonly ListEntry[];
  readonly cursor?: string;
}

/** A change to a list, as announced to every instance. */
export interface ListChange {
  readonly name: string;
  readonly values: readonly string[];
}

/** Called for each announced change; `name = "*"` after a reconnect (changes may have been missed). */
export type ListChangeListener = (change: ListChange) => void;

/** Most entries one page returns. */
export const MAX_PAGE = 100;
/** Most values one add takes. */
export const MAX_VALUES_PER_ADD = 1000;

/** Persistence and announcement of list entries. */
export interface ListStore {
  /** How logs name it: `redis` or `in-process`. */
  readonly description: string;
  /** Adds (or renews) entries. @throws AppError `dependency_unavailable`. */
  add(name: string, values: readonly string[], ttlSeconds?: number): Promise<void>;
  /** Removes one entry; false if it was not there. */
  remove(name: string, value: string): Promise<boolean>;
  /** A bounded page of entries (at most `limit`, ≤ {@link MAX_PAGE}, of unexpired entries). */
  page(name: string, cursor: string | undefined, limit: number): Promise<ListPage>;
  /**
   * How many entries the list holds (one round trip): in Redis, expired entries a page has not yet met still count,
   * so it is at most that many live entries.
   */
  count(name: string): Promise<number>;
  /** Membership of each `{ name, value }`, in one round trip. */
  contains(keys: readonly { readonly name: string; readonly value: string }[]): Promise<boolean[]>;
  /**
   * Until when each `{ name, value }` counts, in one round trip: its expiry (epoch ms), `Infinity` for an entry
   * without one, `0` when it is not a member (or has expired). Caches keep this, not a yes/no, so that an entry
   * stops matching when its TTL passes even while it is cached.
   */
  memberUntil(keys: readonly { readonly name: string; readonly value: string }[]): Promise<number[]>;
  /** Listens for changes made by any instance (idempotent); resolves true once subscribed. */
  subscribe(listener: ListChangeListener): Promise<boolean>;
  dispose(): Promise<void>;
}

/** In-process list store: one instance, same contract (changes announced to this process's listeners). */
export class MemoryListStore implements ListStore {
  readonly description = 'in-process';
  private readonly lists = new Map<string, Map<string, number>>();
  private readonly listeners = new Set<ListChangeListener>();

  /** @param now wall clock, epoch ms (entry expiry). */
  constructor(private readonly now: () => number = Date.now) {}

  private live(name: string): Map<string, number> {
    let l = this.lists.get(name);
    if (l === undefined) this.lists.set(name, (l = new Map()));
    const t = this.now();
    for (const [v, exp] of l) if (exp <= t) l.delete(v);
    return l;
  }

  private announce(change: ListChange): void {
    for (const l of this.listeners) l(change);
  }

  add(name: string, values: readonly string[], ttlSeconds?: number): Promise<void> {
    const l = this.live(name);
    const exp = ttlSeconds === undefined ? Infinity : this.now() + ttlSeconds * 1000;
    for (const v of values) l.set(v, exp);
    this.announce({ name, values: [...values] });
    return Promise.resolve();
  }

  remove(name: string, value: string): Promise<boolean> {
    const had = this.live(name).delete(value);
    if (had) this.announce({ name, values: [value] });
    return Promise.resolve(had);
  }

  page(name: string, cursor: string | undefined, limit: number): Promise<ListPage> {
    const all = [...this.live(name)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const start = cursor === undefined ? 0 : all.findIndex(([v]) => v > cursor);
    const slice = start < 0 ? [] : all.slice(start, start + Math.min(limit, MAX_PAGE));
    const entries = slice.map(([value, exp]) => (exp === Infinity ? { value } : { value, expiresAt: exp }));
    const last = slice[slice.length - 1];
    const more = last !== undefined && start + slice.length < all.length;
    return Promise.resolve(more ? { entries, cursor: last[0] } : { entries });
  }

  count(name: string): Promise<number> {
    return Promise.resolve(this.live(name).size);
  }

  contains(keys: readonly { readonly name: string; readonly value: string }[]): Promise<boolean[]> {
    const t = this.now();
    return this.memberUntil(keys).then((until) => until.map((u) => u > t));
  }

  memberUntil(keys: readonly { readonly name: string; readonly value: string }[]): Promise<number[]> {
    const t = this.now();
    return Promise.resolve(
      keys.map((k) => {
        const exp = this.lists.get(k.name)?.get(k.value) ?? 0;
        return exp > t ? exp : 0;
      }),
    );
  }

  subscribe(listener: ListChangeListener): Promise<boolean> {
    this.listeners.add(listener);
    return Promise.resolve(true);
  }

  dispose(): Promise<void> {
    this.listeners.clear();
    return Promise.resolve();
  }
}
