/**
 * The aggregate store in Redis (docs/signals.md "Windows", "Memory bounds", "Cluster layout").
 *
 * Layout: each entity (a key group's value, hashed) has 2 keys in one hash tag, so one script may touch both on a
 * cluster: `{prefix}v1:sig:{<groupId>:<hash>}:a` (a hash: the packed bucket ring of each of the group's
 * aggregates, field = aggregate id; the answers of its recent transactions, field `=<txid>`) and `…:x` (the
 * recorded transactions, a zset txid → at, to evict the oldest answers). Entity values and distinct members are
 * hashed ({@link RedisAggregateStoreOptions.hash}) before they become key names or members: the store never holds
 * a raw email, IP address or card fingerprint.
 *
 * One Lua script call per entity reads its aggregates, checks idempotency, adds the payment, sets the TTLs and
 * returns the values (lib/signals/redis-aggregate-lua.ts), atomically: a payment sees the payments recorded before
 * it and itself, never one recorded after it. How the calls of one payment travel:
 * - `oneScript: false` (default; a cluster such as Azure Managed Redis, where different entities' keys live on
 *   different shards): one EVALSHA per entity, all issued in the same tick, so the client's auto-pipelining sends
 *   them in one write per connection (with an ioredis Cluster, one per shard node): one round trip per shard.
 * - `oneScript: true` (a single, non-clustered Redis): all the entities of a payment in ONE EVALSHA (the keys of
 *   several entities in one call): the fewest commands and the least client CPU. On a cluster it fails
 *   (CROSSSLOT), so it must stay off there.
 * Either way a payment costs one EVALSHA per entity, or one per payment with `oneScript` ({@link scriptCalls}).
 *
 * Bounds (a hot key, e.g. a carrier NAT address shared by 100 000 payments an hour, included): per entity and
 * aggregate one field of at most BUCKETS + 1 ring entries (distinct: at most `cap` members per entry), at most
 * `maxRecordsPerEntity` transaction answers (the oldest by `at` are forgotten: a retry of a transaction older than
 * its entity's last `maxRecordsPerEntity` payments is counted again; for that NAT address, 1 000 payments are about
 * 36 s), and a TTL on both keys (the group's longest window + its bucket + 1 min, never shortened by a call). Per
 * call the work is bounded by the aggregates and caps, never proportional to the payments an entity has seen.
 * @module
 */
import type { Cluster, Redis } from 'ioredis';
import type { AggregateInput, AggregatePlan, AggregateStore } from './aggregate-store';
import {
  addendOf,
  bucketOf,
  DEFAULT_MAX_RECORDS_PER_ENTITY,
  defaultAggregateHash,
  hashWidth,
  OP_CODE,
  preparePlan,
  type PreparedGroup,
} from './aggregate-ring';
import { runAggregateScript } from './redis-aggregate-lua';

/** Options of a {@link RedisAggregateStore}. */
export interface RedisAggregateStoreOptions {
  /** Prepended to every key (`REDIS_KEY_PREFIX`, e.g. `scoring:`; tests use their own). */
  readonly prefix: string;
  /** All the entities of a payment in one script call: only on a single, non-clustered Redis. Default false. */
  readonly oneScript?: boolean;
  /** Recorded transactions kept per entity, the oldest (by `at`) forgotten first. Default 1 000. */
  readonly maxRecordsPerEntity?: number;
  /**
   * Hash of raw values (entities, distinct members): fixed width, without `{`, `}` or `|`. Default: SHA-256
   * truncated to 66 bits, base64url. A keyed hash (HMAC) keeps guessable values (IPv4) from being recovered.
   */
  readonly hash?: (value: string) => string;
}

/** One entity's part of a call: its group, its 2 keys, its arguments. */
interface EntityCall {
  readonly pg: PreparedGroup;
  readonly keys: readonly [string, string];
  readonly args: (string | number)[];
}

/** Aggregates in Redis: one Lua script per entity (see the module doc). */
export class RedisAggregateStore implements AggregateStore {
  private readonly hash: (value: string) => string;
  private readonly width: number;
  private readonly keep: number;
  private calls = 0;

  constructor(
    private readonly client: Redis | Cluster,
    private readonly options: RedisAggregateStoreOptions,
  ) {
    this.hash = options.hash ?? defaultAggregateHash;
    this.width = hashWidth(this.hash);
    this.keep = Math.max(1, options.maxRecordsPerEntity ?? DEFAULT_MAX_RECORDS_PER_ENTITY);
  }

  /** Script calls made so far (EVALSHA, or EVAL after NOSCRIPT): per payment, one per entity or one in all. */
  get scriptCalls(): number {
    return this.calls;
  }

  /** The 2 keys of an entity: rings and answers, recorded transactions. */
  keysOf(groupId: string, entity: string): [string, string] {
    const tag = `${this.options.prefix}v1:sig:{${encodeURIComponent(groupId)}:${this.hash(entity)}}`;
    return [`${tag}:a`, `${tag}:x`];
  }

  async record(plan: AggregatePlan, input: AggregateInput): Promise<Float64Array> {
    const out = new Float64Array(plan.aggregates.length);
    const calls = this.entityCalls(preparePlan(plan), input);
    if (calls.length === 0) return out;
    const head = [input.transactionId, String(input.at), this.keep, this.width];
    if (this.options.oneScript === true) {
      this.calls++;
      const reply = await runAggregateScript(
        this.client,
        calls.flatMap((c) => c.keys),
        head.concat(...calls.map((c) => c.args)),
      );
      const replies = Array.isArray(reply) ? reply : [];
      calls.forEach((c, e) => fill(out, c.pg, replies[e]));
    } else {
      this.calls += calls.length;
      const replies = await Promise.all(calls.map((c) => runAggregateScript(this.client, c.keys, head.concat(c.args))));
      calls.forEach((c, e) => fill(out, c.pg, Array.isArray(replies[e]) ? (replies[e] as unknown[])[0] : undefined));
    }
    return out;
  }

  /** The script arguments of every entity the payment has (a group without one reads 0s and records nothing). */
  private entityCalls(groups: readonly PreparedGroup[], input: AggregateInput): EntityCall[] {
    const calls: EntityCall[] = [];
    for (let g = 0; g < groups.length; g++) {
      const entity = input.entities[g];
      const pg = groups[g] as PreparedGroup;
      if (entity === undefined) continue;
      const args: (string | number)[] = [pg.ttlMs, pg.specs.length, replyFormat(pg.specs.length)];
      pg.specs.forEach((spec, j) => {
        const i = pg.indexes[j] as number;
        const addend = addendOf(spec, input.counted[i], input.values[i], this.hash);
        args.push(spec.id, OP_CODE[spec.op], bucketOf(input.at, spec), spec.cap, addend ?? '');
      });
      calls.push({ pg, keys: this.keysOf(pg.group.id, entity), args });
    }
    return calls;
  }
}

const formats: string[] = [];
/** The struct format of an entity's reply: n little-endian doubles. */
function replyFormat(n: number): string {
  return (formats[n] ??= `<${'d'.repeat(n)}`);
}

/**
 * Copies one entity's values (packed little-endian doubles) into the answer.
 * @throws Error when the reply is not the script's (the store is not what this code expects).
 */
function fill(out: Float64Array, pg: PreparedGroup, reply: unknown): void {
  if (!Buffer.isBuffer(reply) || reply.length !== 8 * pg.indexes.length)
    throw new Error('unexpected reply from the aggregate script');
  pg.indexes.forEach((i, j) => (out[i] = reply.readDoubleLE(8 * j)));
}
