/**
 * The fleet store on Redis, shared by every instance. Keys (prefix = `REDIS_KEY_PREFIX`):
 * - `{prefix}model:v1:{name}:state`: hash `generation`, `state` (JSON), written by compare-and-set (Lua),
 *   which also publishes `{ name, generation }` on `{prefix}model:v1:changed` in the same step;
 * - `…:rejections`: list, newest first (capped); `…:instances`: hash instanceId → report;
 * - `…:shadow:{active}:{candidate}`: hash of additive counters (expires after 7 days).
 * Subscriptions use a duplicate connection; after a reconnect, listeners get `generation = -1` (re-read).
 */
import type { Redis } from 'ioredis';
import { redisCall, type RedisCall } from '../context/redis-call';
import { redisCas } from '../context/redis-cas';
import { RedisChannelSubscription } from '../context/redis-channel';
import { parseFleetState, type FleetState, type Transition } from './fleet-state';
import {
  MAX_CAS_ATTEMPTS,
  MAX_REJECTIONS,
  type ChangeListener,
  type FleetStore,
  type InstanceReport,
  type Rejection,
} from './fleet-store';
import { emptyCounts, SHADOW_BINS, type ShadowCounts } from './shadow-stats';

const SHADOW_TTL_SEC = 7 * 86_400;

/** Key names of the fleet store (exported for tests that write around the store, e.g. to drop a notification). */
export function fleetKeys(
  prefix: string,
  name: string,
): { state: string; rejections: string; instances: string; channel: string; shadow: (a: string, c: string) => string } {
  const base = `${prefix}model:v1:${name}`;
  return {
    state: `${base}:state`,
    rejections: `${base}:rejections`,
    instances: `${base}:instances`,
    channel: `${prefix}model:v1:changed`,
    shadow: (a, c) => `${base}:shadow:${a}:${c}`,
  };
}

/** Fleet store on Redis. */
export class RedisFleetStore implements FleetStore {
  readonly description = 'redis';
  private readonly listeners = new Set<ChangeListener>();
  private readonly call: RedisCall;
  private readonly channel: RedisChannelSubscription;

  /**
   * @param redis the engine's shared client, or a getter for one that may not be set up yet (calls then fail transiently).
   * @param prefix key prefix, e.g. `scoring:`.
   */
  constructor(
    redis: Redis | (() => Redis | undefined),
    private readonly prefix: string,
  ) {
    const client = typeof redis === 'function' ? redis : () => redis;
    this.call = redisCall(client, 'fleet store');
    this.channel = new RedisChannelSubscription(client, fleetKeys(prefix, '').channel, {
      onMessage: (text) => {
        const m = JSON.parse(text) as { name?: unknown; generation?: unknown };
        if (typeof m.name === 'string' && typeof m.generation === 'number')
          for (const l of this.listeners) l(m.name, m.generation);
      },
      // messages may have been missed while disconnected
      onReconnect: () => {
        for (const l of this.listeners) l('*', -1);
      },
    });
  }

  private keys(name: string): ReturnType<typeof fleetKeys> {
    return fleetKeys(this.prefix, name);
  }

  private async readRaw(name: string): Promise<{ generation: string; state: FleetState | undefined }> {
    const [g, s] = await this.call((r) => r.hmget(this.keys(name).state, 'generation', 'state'));
    return { generation: g ?? 'none', state: s === null || s === undefined ? undefined : parseFleetState(s) };
  }

  async read(name: string): Promise<FleetState | undefined> {
    return (await this.readRaw(name)).state;
  }

  async update(name: string, fn: (current: FleetState | undefined) => Transition): Promise<Transition> {
    const k = this.keys(name);
    const target = {
      key: k.state,
      channel: k.channel,
      name,
      missing: 'none',
      attempts: MAX_CAS_ATTEMPTS,
      conflict: `Too many concurrent changes to ${name}; retry.`,
    };
    return redisCas(this.call, target, async () => {
      const { generation, state } = await this.readRaw(name);
      const t = fn(state);
      const write = t.changed ? { generation: t.state.generation, state: JSON.stringify(t.state) } : undefined;
      return { expected: generation, result: t, write };
    });
  }

  async subscribe(listener: ChangeListener): Promise<boolean> {
    this.listeners.add(listener);
    return this.channel.subscribe();
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

  async reportInstance(r: InstanceReport): Promise<void> {
    await this.call((c) => c.hset(this.keys(r.name).instances, r.instanceId, JSON.stringify(r)));
  }

  async instances(name: string, sinceMs: number): Promise<InstanceReport[]> {
    const k = this.keys(name).instances;
    const all = await this.call((c) => c.hgetall(k));
    const fresh: InstanceReport[] = [];
    const old: string[] = [];
    for (const [id, text] of Object.entries(all)) {
      const r = JSON.parse(text) as InstanceReport;
      if (r.reportedAtMs >= sinceMs) fresh.push(r);
      else old.push(id);
    }
    if (old.length > 0) await this.call((c) => c.hdel(k, ...old)).catch(() => undefined);
    return fresh.sort((a, b) => a.instanceId.localeCompare(b.instanceId));
  }

  async addShadow(name: string, d: ShadowCounts): Promise<void> {
    const k = this.keys(name).shadow(d.activeVersion, d.candidateVersion);
    await this.call((c) => {
      const m = c
        .multi()
        .hincrby(k, 'n', d.n)
        .hincrbyfloat(k, 'sumActive', d.sumActive)
        .hincrbyfloat(k, 'sumCandidate', d.sumCandidate);
      m.hincrbyfloat(k, 'sumAbsDiff', d.sumAbsDiff).hincrby(k, 'errors', d.errors);
      for (let i = 0; i < SHADOW_BINS; i++)
        m.hincrby(k, `a${i}`, d.activeBins[i] ?? 0).hincrby(k, `c${i}`, d.candidateBins[i] ?? 0);
      return m.expire(k, SHADOW_TTL_SEC).exec();
    });
  }

  async shadow(name: string, activeVersion: string, candidateVersion: string): Promise<ShadowCounts | undefined> {
    const h = await this.call((c) => c.hgetall(this.keys(name).shadow(activeVersion, candidateVersion)));
    if (h['n'] === undefined) return undefined;
    const c = emptyCounts(activeVersion, candidateVersion);
    c.n = Number(h['n']);
    c.sumActive = Number(h['sumActive'] ?? 0);
    c.sumCandidate = Number(h['sumCandidate'] ?? 0);
    c.sumAbsDiff = Number(h['sumAbsDiff'] ?? 0);
    c.errors = Number(h['errors'] ?? 0);
    for (let i = 0; i < SHADOW_BINS; i++) {
      c.activeBins[i] = Number(h[`a${i}`] ?? 0);
      c.candidateBins[i] = Number(h[`c${i}`] ?? 0);
    }
    return c;
  }

  async dispose(): Promise<void> {
    this.listeners.clear();
    this.channel.dispose();
    await Promise.resolve();
  }
}
