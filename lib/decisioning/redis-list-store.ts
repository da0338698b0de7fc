/**
 * List entries on Redis, shared by every instance. Keys (prefix = `REDIS_KEY_PREFIX`):
 * - `{prefix}list:v1:{name}:values`: sorted set of the values, all at score 0 (pages in value order, by lex range);
 * - `{prefix}list:v1:{name}:expiry`: hash value → expiry (epoch ms, or `inf`);
 * - channel `{prefix}list:v1:changed`: `{ name, values }` after every change, in the same MULTI as the write.
 * The count of a list is its sorted set's size (expired entries a page has not met yet included). Membership of many keys is one pipelined round trip (HMGET per list), answered with each entry's expiry so that
 * a cache stops counting it at that time. Expired entries stop counting at once
 * and are deleted when a page meets them. Subscriptions use a duplicate connection.
 */
import type { Redis } from 'ioredis';
import type { RedisCall } from '../platform/redis/call';
import { RedisAnnouncements } from '../platform/redis/channel';
import { AppError } from '../errors/errors';
import { MAX_PAGE, type ListChange, type ListChangeListener, type ListPage, type ListStore } from './list-store';

/** Key names of the list store. */
export function listKeys(prefix: string, name: string): { values: string; expiry: string; channel: string } {
  const base = `${prefix}list:v1:${name}`;
  return { values: `${base}:values`, expiry: `${base}:expiry`, channel: `${prefix}list:v1:changed` };
}

/** List store on Redis. */
export class RedisListStore implements ListStore {
  readonly description = 'redis';
  private readonly announcements: RedisAnnouncements<ListChange>;
  private readonly call: RedisCall;

  /**
   * @param redis the engine's shared client, or a getter for one not set up yet (calls then fail transiently).
   * @param prefix key prefix, e.g. `scoring:`.
   * @param now wall clock, epoch ms (entry expiry).
   */
  constructor(
    redis: Redis | (() => Redis | undefined),
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {
    this.announcements = new RedisAnnouncements<ListChange>(redis, listKeys(prefix, '').channel, 'list store', {
      parse: (m) =>
        typeof m['name'] === 'string' && Array.isArray(m['values'])
          ? { name: m['name'], values: m['values'].map(String) }
          : undefined,
      // changes may have been missed while disconnected (the L1 TTL bounds staleness while unsubscribed)
      reconnect: { name: '*', values: [] },
    });
    this.call = this.announcements.call;
  }

  async add(name: string, values: readonly string[], ttlSeconds?: number): Promise<void> {
    if (values.length === 0) return;
    const k = listKeys(this.prefix, name);
    const exp = ttlSeconds === undefined ? 'inf' : String(this.now() + ttlSeconds * 1000);
    const zargs = values.flatMap((v) => [0, v] as const);
    const hargs = values.flatMap((v) => [v, exp]);
    await this.call((r) =>
      r
        .multi()
        .zadd(k.values, ...zargs)
        .hset(k.expiry, ...hargs)
        .publish(k.channel, JSON.stringify({ name, values }))
        .exec(),
    );
  }

  async remove(name: string, value: string): Promise<boolean> {
    const k = listKeys(this.prefix, name);
    const res = await this.call((r) =>
      r
        .multi()
        .zrem(k.values, value)
        .hdel(k.expiry, value)
        .publish(k.channel, JSON.stringify({ name, values: [value] }))
        .exec(),
    );
    return Number(res?.[0]?.[1] ?? 0) > 0;
  }

  async page(name: string, cursor: string | undefined, limit: number): Promise<ListPage> {
    const k = listKeys(this.prefix, name);
    const n = Math.max(1, Math.min(limit, MAX_PAGE));
    const values = await this.call((r) =>
      r.zrangebylex(k.values, cursor === undefined ? '-' : `(${cursor}`, '+', 'LIMIT', 0, n + 1),
    );
    const shown = values.slice(0, n);
    const exps = shown.length === 0 ? [] : await this.call((r) => r.hmget(k.expiry, ...shown));
    const t = this.now();
    const entries = [];
    const expired: string[] = [];
    for (let i = 0; i < shown.length; i++) {
      const e = exps[i];
      const value = shown[i] as string;
      if (e === 'inf') entries.push({ value });
      else if (e !== null && e !== undefined && Number(e) > t) entries.push({ value, expiresAt: Number(e) });
      else expired.push(value);
    }
    if (expired.length > 0)
      await this.call((r) =>
        r
          .multi()
          .zrem(k.values, ...expired)
          .hdel(k.expiry, ...expired)
          .exec(),
      ).catch(() => undefined);
    const last = shown[shown.length - 1];
    return values.length > n && last !== undefined ? { entries, cursor: last } : { entries };
  }

  count(name: string): Promise<number> {
    return this.call((r) => r.zcard(listKeys(this.prefix, name).values));
  }

  async contains(keys: readonly { readonly name: string; readonly value: string }[]): Promise<boolean[]> {
    const t = this.now();
    return (await this.memberUntil(keys)).map((u) => u > t);
  }

  async memberUntil(keys: readonly { readonly name: string; readonly value: string }[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const byList = new Map<string, number[]>();
    keys.forEach((key, i) => {
      const at = byList.get(key.name);
      if (at === undefined) byList.set(key.name, [i]);
      else at.push(i);
    });
    const lists = [...byList];
    // one HMGET per list, issued together: the client's auto-pipelining sends them in the same write as the
    // context lookup's commands of the same tick (an explicit pipeline would be a write of its own)
    const res = await this.call((r) =>
      Promise.all(
        lists.map(([name, at]) =>
          r.hmget(listKeys(this.prefix, name).expiry, ...at.map((i) => keys[i]?.value ?? '')).then(
            (v): [Error | null, unknown] => [null, v],
            (e: unknown): [Error | null, unknown] => [e instanceof Error ? e : new Error(String(e)), null],
          ),
        ),
      ),
    );
    const t = this.now();
    const out = new Array<number>(keys.length).fill(0);
    lists.forEach(([, at], j) => {
      const [err, exps] = res?.[j] ?? [new Error('no reply'), null];
      if (err !== null)
        throw new AppError('dependency_unavailable', 'The list store (Redis) is unavailable.', {
          cause: err,
          transient: true,
        });
      at.forEach((i, m) => {
        const e = (exps as (string | null)[])[m];
        const until = e === 'inf' ? Infinity : e === null || e === undefined ? 0 : Number(e);
        out[i] = until > t ? until : 0;
      });
    });
    return out;
  }

  subscribe(listener: ListChangeListener): Promise<boolean> {
    return this.announcements.subscribe(listener);
  }

  dispose(): Promise<void> {
    this.announcements.dispose();
    return Promise.resolve();
  }
}
