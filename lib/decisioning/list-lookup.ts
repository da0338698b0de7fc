/**
 * List membership for scoring: an in-process LRU (L1) in front of the list store. Misses of one event go to
 * the store in one round trip. L1 keeps, per value, until when it counts (the entry's expiry, from the store),
 * so an entry added with a TTL stops matching when it expires, on every instance, cached or not. Every change
 * announced by any instance drops the changed values from L1 (`applied` event), so a change reaches every
 * instance as fast as pub/sub; the L1 TTL bounds staleness while the subscription is down.
 */
import { LRUCache } from 'lru-cache';
import type { ListMemberships } from './cel-environment';
import type { ListUse } from './compile-ruleset';
import type { ListChange, ListStore } from './list-store';

/** Events of a {@link ListLookup}. */
export interface ListLookupEvents {
  /** A change (from any instance) was applied to this instance's L1. */
  applied(e: { readonly name: string; readonly values: number }): void;
  /** The store could not answer; the affected lists are left out (their rules fail closed to review). */
  lookupFailed(e: { readonly lists: number; readonly reason: string }): void;
}

/** Options of a {@link ListLookup}. */
export interface ListLookupOptions {
  readonly maxEntries: number;
  readonly ttlMs: number;
  /** Monotonic clock for the TTL, ms. Default `performance.now`. */
  readonly now?: () => number;
  /** Wall clock for entry expiry, epoch ms (the store's clock). Default `Date.now`. */
  readonly wallNow?: () => number;
  readonly on?: Partial<ListLookupEvents>;
}

const SEP = '\u0000';

/** Membership lookups behind L1, kept fresh by the store's change announcements. */
export class ListLookup {
  /** Until when each cached value counts (epoch ms; `Infinity` = no expiry; `0` = not a member). */
  private readonly l1: LRUCache<string, number>;
  /** Bumped by every applied change: a lookup that raced a change does not fill L1 with what it read. */
  private changes = 0;

  constructor(
    readonly store: ListStore,
    private readonly options: ListLookupOptions,
  ) {
    const now = options.now;
    this.l1 = new LRUCache<string, number>({
      max: options.maxEntries,
      ttl: options.ttlMs,
      updateAgeOnGet: false,
      ...(now === undefined ? {} : { perf: { now } }),
    });
  }

  private subscribed = false;
  private lastAttempt = -Infinity;
  private readonly listener = (c: ListChange): void => this.apply(c);

  /** Subscribes to change announcements; resolves whether the subscription is up. */
  async start(): Promise<boolean> {
    this.lastAttempt = (this.options.now ?? performance.now.bind(performance))();
    this.subscribed = await this.store.subscribe(this.listener).catch(() => false);
    return this.subscribed;
  }

  /** Retries the subscription (at most once a second) while it is not up, e.g. Redis was still connecting. */
  private ensureSubscribed(): void {
    if (this.subscribed) return;
    const t = (this.options.now ?? performance.now.bind(performance))();
    if (t - this.lastAttempt < 1000) return;
    this.lastAttempt = t;
    void this.start();
  }

  private apply(c: ListChange): void {
    this.changes++;
    if (c.name === '*') this.l1.clear();
    else for (const v of c.values) this.l1.delete(c.name + SEP + v);
    this.options.on?.applied?.({ name: c.name, values: c.values.length });
  }

  /**
   * Membership of the event's key field on each list in `uses`. A missing key field is "not a member".
   * Lists the store could not answer are left out of the result (`in_list` on them then fails at run time).
   */
  async memberships(uses: readonly ListUse[], event: Readonly<Record<string, unknown>>): Promise<ListMemberships> {
    this.ensureSubscribed();
    const t = (this.options.wallNow ?? Date.now)();
    const out = new Map<string, boolean>();
    const misses: { name: string; value: string }[] = [];
    for (const u of uses) {
      const v = event[u.key];
      if (typeof v !== 'string') {
        out.set(u.name, false);
        continue;
      }
      const hit = this.l1.get(u.name + SEP + v);
      if (hit === undefined) misses.push({ name: u.name, value: v });
      else out.set(u.name, hit > t);
    }
    if (misses.length === 0) return out;
    const changes = this.changes;
    try {
      const until = await this.store.memberUntil(misses);
      misses.forEach((m, i) => {
        const u = until[i] ?? 0;
        out.set(m.name, u > t);
        if (changes === this.changes) this.l1.set(m.name + SEP + m.value, u);
      });
    } catch (err) {
      this.options.on?.lookupFailed?.({ lists: misses.length, reason: (err as Error).message });
    }
    return out;
  }
}
