/**
 * The pointer store on Redis, shared by every instance. Keys (prefix = `REDIS_KEY_PREFIX`, kind = `model`,
 * `ruleset`, …):
 * - `{prefix}{kind}:v1:{name}:state`: hash `generation`, `state` (JSON), written by compare-and-set (Lua), which
 *   also publishes `{ name, generation }` on `{prefix}{kind}:v1:changed` in the same step;
 * - `{prefix}{kind}:v1:{name}:rejections`: list, newest first (capped).
 * Subscriptions use a duplicate connection; after a reconnect, listeners hear `name = "*"`, `generation = -1`.
 * @module
 */
import type { Redis } from 'ioredis';
import type { RedisCall } from '../platform/redis/call';
import { RedisAnnouncements } from '../platform/redis/channel';
import {
  MAX_CAS_ATTEMPTS,
  MAX_REJECTIONS,
  nextGeneration,
  type Generational,
  type PointerListener,
  type PointerStore,
  type PointerUpdate,
  type Rejection,
} from './pointer-store';

/** Key names of the pointer of `name` of one kind (exported for tests that write around the store). */
export function pointerKeys(
  prefix: string,
  kind: string,
  name: string,
): { state: string; rejections: string; channel: string; base: string } {
  const base = `${prefix}${kind}:v1:${name}`;
  return { state: `${base}:state`, rejections: `${base}:rejections`, channel: `${prefix}${kind}:v1:changed`, base };
}

/** Pointer store on Redis. */
export class RedisPointerStore<S extends Generational> implements PointerStore<S> {
  readonly description = 'redis';
  /** The store's call wrapper (kinds that keep more beside the pointer, e.g. instance reports, use it too). */
  readonly call: RedisCall;
  private readonly announcements: RedisAnnouncements<{ name: string; generation: number }>;
  /** Each listener's adapter (subscribing the same listener twice adds it once). */
  private readonly heard = new Map<PointerListener, (m: { name: string; generation: number }) => void>();

  /**
   * @param redis the engine's shared client, or a getter for one that may not be set up yet (calls then fail transiently).
   * @param prefix key prefix, e.g. `scoring:`.
   * @param kind the artifact kind, e.g. `model`.
   * @param parse a stored state's JSON text → the state. @throws what the kind throws for an unreadable state.
   */
  constructor(
    redis: Redis | (() => Redis | undefined),
    private readonly prefix: string,
    readonly kind: string,
    private readonly parse: (text: string) => S = (t) => JSON.parse(t) as S,
  ) {
    this.announcements = new RedisAnnouncements(redis, pointerKeys(prefix, kind, '').channel, `${kind} pointer store`, {
      parse: (m) =>
        typeof m['name'] === 'string' && typeof m['generation'] === 'number'
          ? { name: m['name'], generation: m['generation'] }
          : undefined,
      // messages may have been missed while disconnected
      reconnect: { name: '*', generation: -1 },
    });
    this.call = this.announcements.call;
  }

  /** The keys of `name`. */
  keys(name: string): ReturnType<typeof pointerKeys> {
    return pointerKeys(this.prefix, this.kind, name);
  }

  private async readRaw(name: string): Promise<{ generation: string; state: S | undefined }> {
    const [g, s] = await this.call((r) => r.hmget(this.keys(name).state, 'generation', 'state'));
    return { generation: g ?? 'none', state: s === null || s === undefined ? undefined : this.parse(s) };
  }

  async read(name: string): Promise<S | undefined> {
    return (await this.readRaw(name)).state;
  }

  update(name: string, fn: (current: S | undefined) => S | undefined): Promise<PointerUpdate<S>> {
    const target = {
      key: this.keys(name).state,
      name,
      missing: 'none',
      attempts: MAX_CAS_ATTEMPTS,
      conflict: `Too many concurrent changes to ${this.kind} ${name}; retry.`,
    };
    return this.announcements.cas<PointerUpdate<S>>(target, async () => {
      const { generation, state } = await this.readRaw(name);
      const next = fn(state);
      if (next === undefined) return { expected: generation, result: { state, changed: false }, write: undefined };
      const s = nextGeneration(state, next);
      const write = { generation: s.generation, state: JSON.stringify(s) };
      return { expected: generation, result: { state: s, changed: true }, write };
    });
  }

  subscribe(listener: PointerListener): Promise<boolean> {
    let heard = this.heard.get(listener);
    if (heard === undefined) this.heard.set(listener, (heard = (m) => listener(m.name, m.generation)));
    return this.announcements.subscribe(heard);
  }

  async recordRejection(r: Rejection): Promise<void> {
    const k = this.keys(r.name).rejections;
    await this.call((c) =>
      c
        .multi()
        .lpush(k, JSON.stringify(r))
        .ltrim(k, 0, MAX_REJECTIONS - 1)
        .exec(),
    );
  }

  async rejections(name: string): Promise<Rejection[]> {
    const raw = await this.call((c) => c.lrange(this.keys(name).rejections, 0, MAX_REJECTIONS - 1));
    return raw.map((s) => JSON.parse(s) as Rejection);
  }

  dispose(): Promise<void> {
    this.announcements.dispose();
    return Promise.resolve();
  }
}
