/**
 * The fleet pointer of a ruleset: which version is active, the previous ones (rollback), a candidate with
 * its canary and shadow shares, and the last rejections. On Redis (key `{prefix}ruleset:v1:{name}:state`, compare-and-set in Lua
 * that also publishes `{ name, generation }` on `{prefix}ruleset:v1:changed`, as the model fleet pointer does)
 * or in-process without Redis.
 */
import type { Redis } from 'ioredis';
import { runScript } from '../context/redis-script';
import { AppError, type FieldError } from '../errors/errors';

/** Previous versions kept for rollback; rejections kept. */
export const MAX_HISTORY = 10;

/** A refused upload. */
export interface RulesetRejection {
  readonly version: string;
  readonly reason: string;
  readonly errors: readonly FieldError[];
  readonly at: string;
}

/** A candidate version and its shares (percent, 0–100): canary of users, shadow of payments. */
export interface RulesetTraffic {
  readonly candidate: string;
  readonly canaryPercent: number;
  readonly shadowPercent: number;
}

/** The pointer's state. */
export interface RulesetState {
  readonly generation: number;
  readonly active: string | undefined;
  /** Earlier active versions, newest first. */
  readonly previous: readonly string[];
  /** The candidate: decides for its canary share of users, evaluated off the decision for its shadow share. */
  readonly traffic: RulesetTraffic | undefined;
  readonly rejections: readonly RulesetRejection[];
}

/** An empty state. */
export const EMPTY_STATE: RulesetState = {
  generation: 0,
  active: undefined,
  previous: [],
  traffic: undefined,
  rejections: [],
};

/** Persistence and announcement of ruleset pointers. */
export interface RulesetPointerStore {
  readonly description: string;
  read(name: string): Promise<RulesetState>;
  /** Applies `fn` atomically (compare-and-set on generation) and announces the change. `undefined` = no change. */
  update(name: string, fn: (s: RulesetState) => Omit<RulesetState, 'generation'> | undefined): Promise<RulesetState>;
  /** Listens for changes by any instance; resolves true once subscribed. */
  subscribe(listener: (name: string) => void): Promise<boolean>;
  dispose(): Promise<void>;
}

/** In-process pointer store. */
export class MemoryRulesetPointerStore implements RulesetPointerStore {
  readonly description = 'in-process';
  private readonly states = new Map<string, RulesetState>();
  private readonly listeners = new Set<(name: string) => void>();

  read(name: string): Promise<RulesetState> {
    return Promise.resolve(this.states.get(name) ?? EMPTY_STATE);
  }

  update(name: string, fn: (s: RulesetState) => Omit<RulesetState, 'generation'> | undefined): Promise<RulesetState> {
    const cur = this.states.get(name) ?? EMPTY_STATE;
    const next = fn(cur);
    if (next === undefined) return Promise.resolve(cur);
    const s = { ...next, generation: cur.generation + 1 };
    this.states.set(name, s);
    for (const l of this.listeners) l(name);
    return Promise.resolve(s);
  }

  subscribe(listener: (name: string) => void): Promise<boolean> {
    this.listeners.add(listener);
    return Promise.resolve(true);
  }

  dispose(): Promise<void> {
    this.listeners.clear();
    return Promise.resolve();
  }
}

const CAS = `
local g = redis.call('HGET', KEYS[1], 'generation')
if (g or '0') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'generation', ARGV[2], 'state', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`;

/** Pointer store on Redis, shared by every instance. */
export class RedisRulesetPointerStore implements RulesetPointerStore {
  readonly description = 'redis';
  private subscriber: Redis | undefined;
  /** The pending or done subscription (later callers wait for the same one). */
  private subscribing: Promise<boolean> | undefined;
  private readonly listeners = new Set<(name: string) => void>();
  private readonly client: () => Redis | undefined;

  constructor(
    redis: Redis | (() => Redis | undefined),
    private readonly prefix: string,
  ) {
    this.client = typeof redis === 'function' ? redis : () => redis;
  }

  private get channel(): string {
    return `${this.prefix}ruleset:v1:changed`;
  }

  private async call<T>(fn: (r: Redis) => Promise<T>): Promise<T> {
    const r = this.client();
    try {
      if (r === undefined) throw new Error('Redis is not set up yet');
      return await fn(r);
    } catch (err) {
      throw new AppError('dependency_unavailable', 'The ruleset pointer (Redis) is unavailable.', {
        cause: err,
        transient: true,
        retryAfterSec: 1,
      });
    }
  }

  async read(name: string): Promise<RulesetState> {
    const [g, s] = await this.call((r) => r.hmget(`${this.prefix}ruleset:v1:${name}:state`, 'generation', 'state'));
    if (s === null || s === undefined) return EMPTY_STATE;
    const { shadow, ...state } = JSON.parse(s) as RulesetState & { shadow?: string };
    // a state written before canaries had `shadow: version` (evaluated on every payment)
    const traffic =
      state.traffic ?? (shadow === undefined ? undefined : { candidate: shadow, canaryPercent: 0, shadowPercent: 100 });
    return { ...state, traffic, generation: Number(g ?? 0) };
  }

  async update(
    name: string,
    fn: (s: RulesetState) => Omit<RulesetState, 'generation'> | undefined,
  ): Promise<RulesetState> {
    const key = `${this.prefix}ruleset:v1:${name}:state`;
    for (let attempt = 0; attempt < 8; attempt++) {
      const cur = await this.read(name);
      const next = fn(cur);
      if (next === undefined) return cur;
      const s: RulesetState = { ...next, generation: cur.generation + 1 };
      const message = JSON.stringify({ name, generation: s.generation });
      const ok = await this.call((r) =>
        runScript(
          r,
          CAS,
          [key],
          [String(cur.generation), String(s.generation), JSON.stringify(s), this.channel, message],
        ),
      );
      if (ok === 1) return s;
    }
    throw new AppError('conflict', `Too many concurrent changes to ruleset ${name}; retry.`, {
      transient: true,
      retryAfterSec: 1,
    });
  }

  async subscribe(listener: (name: string) => void): Promise<boolean> {
    this.listeners.add(listener);
    if (this.subscriber !== undefined && this.subscribing !== undefined) return this.subscribing;
    const client = this.client();
    if (client === undefined) return false;
    const sub = client.duplicate({
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      lazyConnect: true,
      commandTimeout: undefined,
    });
    this.subscriber = sub;
    sub.on('message', (ch: string, text: string) => {
      if (ch !== this.channel) return;
      try {
        const m = JSON.parse(text) as { name?: unknown };
        if (typeof m.name === 'string') for (const l of this.listeners) l(m.name);
      } catch {
        /* not ours */
      }
    });
    sub.on('error', () => undefined); // the reconcile loop covers an unavailable subscription
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 2000)));
    timer?.unref();
    this.subscribing = Promise.race([
      sub.subscribe(this.channel).then(
        () => true,
        () => {
          if (this.subscriber === sub) this.subscriber = undefined;
          sub.disconnect();
          return false;
        },
      ),
      waited,
    ]);
    const ok = await this.subscribing;
    clearTimeout(timer);
    if (!ok && this.subscriber === sub) {
      // not subscribed in time: drop this connection; the next call subscribes again
      this.subscriber = undefined;
      this.subscribing = undefined;
      sub.disconnect();
    }
    return ok;
  }

  async dispose(): Promise<void> {
    this.listeners.clear();
    this.subscriber?.disconnect();
    this.subscriber = undefined;
    await Promise.resolve();
  }
}
