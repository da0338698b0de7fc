/**
 * The fleet store on Redis: the model kind's pointer on the one Redis pointer store (`lib/rollout`), and beside it
 * (prefix = `REDIS_KEY_PREFIX`):
 * - `{prefix}model:v1:{name}:instances`: hash instanceId → report;
 * - `…:shadow:{active}:{candidate}`: hash of additive counters (expires after 7 days).
 */
import type { Redis } from 'ioredis';
import type { RedisCall } from '../platform/redis/call';
import { pointerKeys, RedisPointerStore } from '../rollout/redis-pointer-store';
import { parseFleetState, type FleetState } from './fleet-state';
import { FleetStore, MemoryFleetReports, type FleetReports, type InstanceReport } from './fleet-store';
import type { PointerStore } from '../rollout/pointer-store';
import { emptyCounts, SHADOW_BINS, type ShadowCounts } from './shadow-stats';

const SHADOW_TTL_SEC = 7 * 86_400;

/** The artifact kind of models in the pointer store. */
export const MODEL_KIND = 'model';

/** Key names of the fleet store (exported for tests that write around the store, e.g. to drop a notification). */
export function fleetKeys(
  prefix: string,
  name: string,
): { state: string; rejections: string; instances: string; channel: string; shadow: (a: string, c: string) => string } {
  const k = pointerKeys(prefix, MODEL_KIND, name);
  return {
    state: k.state,
    rejections: k.rejections,
    instances: `${k.base}:instances`,
    channel: k.channel,
    shadow: (a, c) => `${k.base}:shadow:${a}:${c}`,
  };
}

/** Instance reports and shadow counts on Redis, shared by every instance. */
export class RedisFleetReports implements FleetReports {
  constructor(
    private readonly call: RedisCall,
    private readonly prefix: string,
  ) {}

  async reportInstance(r: InstanceReport): Promise<void> {
    await this.call((c) => c.hset(fleetKeys(this.prefix, r.name).instances, r.instanceId, JSON.stringify(r)));
  }

  async instances(name: string, sinceMs: number): Promise<InstanceReport[]> {
    const k = fleetKeys(this.prefix, name).instances;
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
    const k = fleetKeys(this.prefix, name).shadow(d.activeVersion, d.candidateVersion);
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
    const h = await this.call((c) => c.hgetall(fleetKeys(this.prefix, name).shadow(activeVersion, candidateVersion)));
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
}

/**
 * The fleet store on Redis.
 * @param redis the engine's shared client, or a getter for one that may not be set up yet (calls then fail transiently).
 * @param prefix key prefix, e.g. `scoring:`.
 */
export function redisFleetStore(redis: Redis | (() => Redis | undefined), prefix: string): FleetStore {
  return fleetStore(new RedisPointerStore<FleetState>(redis, prefix, MODEL_KIND, parseFleetState), prefix);
}

/** The fleet store over the model kind's pointer store: the reports beside it on Redis, or in process. */
export function fleetStore(pointers: PointerStore<FleetState>, prefix: string): FleetStore {
  const reports =
    pointers instanceof RedisPointerStore ? new RedisFleetReports(pointers.call, prefix) : new MemoryFleetReports();
  return new FleetStore(pointers, reports);
}
