/**
 * The fleet pointer of a ruleset: which version is active, the previous ones (rollback), a candidate with
 * its canary and shadow shares, and the last rejections. On Redis (key `{prefix}ruleset:v1:{name}:state`, compare-and-set in Lua
 * that also publishes `{ name, generation }` on `{prefix}ruleset:v1:changed`, as the model fleet pointer does)
 * or in-process without Redis.
 */
import type { JsonFileMap } from '../persistence/json-file-map';
import type { Redis } from 'ioredis';
import { redisCall, type RedisCall } from '../context/redis-call';
import { redisCas } from '../context/redis-cas';
import { RedisChannelSubscription } from '../context/redis-channel';
import type { FieldError } from '../errors/errors';

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
  readonly description: string;
  private readonly states = new Map<string, RulesetState>();
  private readonly listeners = new Set<(name: string) => void>();

  /**
   * @param file where the pointers are kept across restarts (embedded defaults: `ROLLOUT_STATE_DIR`); default none,
   *   in memory only.
   */
  constructor(private readonly file?: JsonFileMap<RulesetState>) {
    this.description = file === undefined ? 'in-process' : `in-process, kept in ${file.file}`;
    for (const [name, state] of file?.entries() ?? []) this.states.set(name, state);
  }

  read(name: string): Promise<RulesetState> {
    return Promise.resolve(this.states.get(name) ?? EMPTY_STATE);
  }

  update(name: string, fn: (s: RulesetState) => Omit<RulesetState, 'generation'> | undefined): Promise<RulesetState> {
    const cur = this.states.get(name) ?? EMPTY_STATE;
    const next = fn(cur);
    if (next === undefined) return Promise.resolve(cur);
    const s = { ...next, generation: cur.generation + 1 };
    this.states.set(name, s);
    this.file?.set(name, s);
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

/** Pointer store on Redis, shared by every instance. */
export class RedisRulesetPointerStore implements RulesetPointerStore {
  readonly description = 'redis';
  private readonly listeners = new Set<(name: string) => void>();
  private readonly call: RedisCall;
  private readonly channel: RedisChannelSubscription;

  constructor(
    redis: Redis | (() => Redis | undefined),
    private readonly prefix: string,
  ) {
    const client = typeof redis === 'function' ? redis : () => redis;
    this.call = redisCall(client, 'ruleset pointer');
    this.channel = new RedisChannelSubscription(client, `${prefix}ruleset:v1:changed`, {
      onMessage: (text) => {
        const m = JSON.parse(text) as { name?: unknown };
        if (typeof m.name === 'string') for (const l of this.listeners) l(m.name);
      },
    });
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
    const target = {
      key: `${this.prefix}ruleset:v1:${name}:state`,
      channel: this.channel.channel,
      name,
      missing: '0',
      attempts: 8,
      conflict: `Too many concurrent changes to ruleset ${name}; retry.`,
    };
    return redisCas(this.call, target, async () => {
      const cur = await this.read(name);
      const expected = String(cur.generation);
      const next = fn(cur);
      if (next === undefined) return { expected, result: cur, write: undefined };
      const s: RulesetState = { ...next, generation: cur.generation + 1 };
      return { expected, result: s, write: { generation: s.generation, state: JSON.stringify(s) } };
    });
  }

  async subscribe(listener: (name: string) => void): Promise<boolean> {
    this.listeners.add(listener);
    return this.channel.subscribe();
  }

  async dispose(): Promise<void> {
    this.listeners.clear();
    this.channel.dispose();
    await Promise.resolve();
  }
}
