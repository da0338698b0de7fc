import type { ContextKey } from './cache-tier';

/** Version of the cached-context schema; part of every cache key so a format change never reads old values. */
export const CONTEXT_SCHEMA_VERSION = 1;

const enc = (s: string): string => encodeURIComponent(s);

/**
 * Redis key names, all under one prefix (`REDIS_KEY_PREFIX`, default `scoring:`). Ids are URI-encoded so
 * `:` inside an id cannot collide with the separator.
 *
 * - context cache: `{prefix}v1:ctx:{<userId>}[:<sessionId>]`
 * - keys cached per user (for invalidation): `{prefix}v1:ctxidx:{<userId>}`
 * - velocity: `{prefix}v1:vel:{<userId>}:t` (payments zset), `…:d` (records), `…:a` (aggregates), `…:c` (countries)
 *
 * The literal braces around the user id are a Redis Cluster hash tag: every key of a user is in one slot,
 * so the scripts touching several of them stay valid on a cluster.
 * - profile origin: `{prefix}profile:<userId>` (unversioned: it is the source of truth, not a cache)
 * - invalidation channel: `{prefix}v1:ctx:invalidate`
 */
export class ContextKeys {
  private readonly base: string;
  /** @param prefix prepended to every key, e.g. `scoring:` or a per-test prefix. */
  constructor(readonly prefix: string) {
    this.base = `${prefix}v${CONTEXT_SCHEMA_VERSION}:`;
  }
  /** Cache key of a user's context, per session when one is given. */
  ctx(userId: string, sessionId?: string): ContextKey {
    const u = `${this.base}ctx:{${enc(userId)}}`;
    return { key: sessionId === undefined ? u : `${u}:${enc(sessionId)}`, userId };
  }
  /** Set of the context keys cached for a user. */
  ctxIndex(userId: string): string {
    return `${this.base}ctxidx:{${enc(userId)}}`;
  }
  /** Velocity keys of a user: `[payments zset, records hash, aggregates hash, countries hash]`. */
  velocity(userId: string): [string, string, string, string] {
    const tag = `${this.base}vel:{${enc(userId)}}`;
    return [`${tag}:t`, `${tag}:d`, `${tag}:a`, `${tag}:c`];
  }
  /** Origin profile record of a user (JSON). */
  profile(userId: string): string {
    return `${this.prefix}profile:${enc(userId)}`;
  }
  /** Pub/sub channel of invalidations. */
  get channel(): string {
    return `${this.base}ctx:invalidate`;
  }
}
