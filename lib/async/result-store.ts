import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { redisCall, type RedisCall } from '../platform/redis/call';
import { AppError } from '../errors/errors';
import type { ScoreResult } from '../scoring/scorer';

/** The result published for an asynchronously scored payment: the HTTP result plus message fields. */
export interface AsyncScoreResult extends ScoreResult {
  /** The trigger message's correlation id, if it had one. */
  readonly correlationId?: string;
  /** When the payment was first scored (ISO 8601). Identical on every redelivery. */
  readonly scoredAt: string;
}

/** What the store knows about one transaction. */
export interface StoredState {
  /** The first result, if one is stored and readable (a corrupt record reads as absent). */
  readonly result: AsyncScoreResult | undefined;
  /** True once a publish of the result was confirmed by the broker ({@link ResultStore.markPublished}). */
  readonly published: boolean;
}

/**
 * Keeps the first result of each transaction and whether its publish was confirmed, so redeliveries
 * re-emit the stored result (never a new score) and a confirmed publish is never repeated.
 */
export interface ResultStore {
  /** The stored state of a transaction. Never throws on a corrupt record: it reads as absent. */
  lookup(transactionId: string): Promise<StoredState>;
  /** Stores a result unless one is already stored; returns whichever is stored (first writer wins). */
  putIfAbsent(transactionId: string, result: AsyncScoreResult): Promise<AsyncScoreResult>;
  /** Records that the broker confirmed the publish of the transaction's result (kept for the same TTL). */
  markPublished(transactionId: string): Promise<void>;
  /** {@link lookup} of several transactions at once (Redis: one pipeline); one state per id, in order. */
  lookupMany(transactionIds: readonly string[]): Promise<StoredState[]>;
  /** {@link markPublished} of several transactions at once (Redis: one pipeline). */
  markManyPublished(transactionIds: readonly string[]): Promise<void>;
}

/** Why a stored record was unreadable. */
export interface CorruptRecord {
  readonly transactionId: string;
  readonly reason: 'not_json' | 'wrong_shape';
  /** Size of the stored value, bytes (the value itself is never reported: it holds payment data). */
  readonly bytes: number;
}

const DECISIONS = new Set(['approve', 'review', 'decline']);

/**
 * Parses a stored record: a JSON object whose `transactionId` matches, with a finite `score`, a known
 * `decision`, a `model` and a `scoredAt`. Anything else is corrupt.
 */
export function parseStoredResult(
  transactionId: string,
  raw: string,
): AsyncScoreResult | { readonly corrupt: CorruptRecord['reason'] } {
  let v: unknown;
  try {
    v = JSON.parse(raw) as unknown;
  } catch {
    return { corrupt: 'not_json' };
  }
  const o = v as Partial<Record<keyof AsyncScoreResult, unknown>> | null;
  const model = o?.model as { name?: unknown; version?: unknown } | undefined;
  const ok =
    o !== null &&
    typeof o === 'object' &&
    o.transactionId === transactionId &&
    typeof o.score === 'number' &&
    Number.isFinite(o.score) &&
    typeof o.decision === 'string' &&
    DECISIONS.has(o.decision) &&
    typeof o.scoredAt === 'string' &&
    typeof model?.name === 'string' &&
    typeof model.version === 'string';
  return ok ? (o as AsyncScoreResult) : { corrupt: 'wrong_shape' };
}

/**
 * In-process store (no Redis configured): bounded LRU with the same TTL as Redis would use.
 * @param ttlSec how long a result is kept, s.
 * @param maxEntries bound on stored results.
 * @param now clock for TTLs, ms (monotonic). Default `performance.now`.
 */
export class MemoryResultStore implements ResultStore {
  private readonly cache: LRUCache<string, { result: AsyncScoreResult; published: boolean }>;
  constructor(ttlSec: number, maxEntries: number, now: () => number = () => performance.now()) {
    this.cache = new LRUCache({
      max: maxEntries,
      ttl: ttlSec * 1000,
      perf: { now },
      ttlResolution: 0,
      ttlAutopurge: false,
    });
  }
  lookup(transactionId: string): Promise<StoredState> {
    const e = this.cache.get(transactionId);
    return Promise.resolve({ result: e?.result, published: e?.published ?? false });
  }
  putIfAbsent(transactionId: string, result: AsyncScoreResult): Promise<AsyncScoreResult> {
    const existing = this.cache.get(transactionId);
    if (existing !== undefined) return Promise.resolve(existing.result);
    this.cache.set(transactionId, { result, published: false });
    return Promise.resolve(result);
  }
  markPublished(transactionId: string): Promise<void> {
    const e = this.cache.get(transactionId);
    if (e !== undefined) e.published = true; // keeps the entry's TTL
    return Promise.resolve();
  }
  lookupMany(transactionIds: readonly string[]): Promise<StoredState[]> {
    return Promise.all(transactionIds.map((tx) => this.lookup(tx)));
  }
  async markManyPublished(transactionIds: readonly string[]): Promise<void> {
    for (const tx of transactionIds) await this.markPublished(tx);
  }
}

/** The replies of an executed pipeline; throws the first command error. */
function pipelineReplies(exec: [Error | null, unknown][] | null): unknown[] {
  if (exec === null) throw new Error('the pipeline was not executed');
  return exec.map(([err, reply]) => {
    if (err !== null) throw err;
    return reply;
  });
}

const DELETE_IF_SAME = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** Options of {@link RedisResultStore}. */
export interface RedisResultStoreOptions {
  /** Called when a stored record is unreadable; it is then deleted (if unchanged) and treated as absent. */
  readonly onCorrupt?: (e: CorruptRecord) => void;
}

/**
 * Redis store: the result under `${keyPrefix}result:v1:{transactionId}` (`SET NX EX ttl`, so the first
 * result wins across instances) and a confirmed publish under `${keyPrefix}published:v1:{transactionId}`
 * (`SET EX ttl`). A corrupt result record is reported, deleted (compare-and-delete) and treated as absent,
 * never retried. Failures surface as transient `dependency_unavailable` errors (the message is redelivered).
 */
export class RedisResultStore implements ResultStore {
  private readonly client: () => Redis | undefined;
  private readonly call: RedisCall;
  private readonly onCorrupt: (e: CorruptRecord) => void;

  /**
   * @param redis the client, or a getter for a client that may not be set up yet (then calls fail transiently).
   * @param keyPrefix prefix of every key (e.g. `scoring:`).
   * @param ttlSec how long a result and its published mark are kept, s (`IDEMPOTENCY_TTL_SEC`, 6 h by default).
   */
  constructor(
    redis: Redis | (() => Redis | undefined),
    private readonly keyPrefix: string,
    private readonly ttlSec: number,
    options: RedisResultStoreOptions = {},
  ) {
    this.client = typeof redis === 'function' ? redis : () => redis;
    this.call = redisCall(this.client, 'result store');
    this.onCorrupt = options.onCorrupt ?? (() => undefined);
  }

  private key(transactionId: string): string {
    return `${this.keyPrefix}result:v1:${transactionId}`;
  }
  private publishedKey(transactionId: string): string {
    return `${this.keyPrefix}published:v1:${transactionId}`;
  }

  async lookup(transactionId: string): Promise<StoredState> {
    // Two keys in different hash slots: two GETs in parallel (cluster-safe), one round trip.
    const [raw, mark] = await this.call((redis) =>
      Promise.all([redis.get(this.key(transactionId)), redis.exists(this.publishedKey(transactionId))]),
    );
    return { result: raw === null ? undefined : await this.read(transactionId, raw), published: mark === 1 };
  }

  async lookupMany(transactionIds: readonly string[]): Promise<StoredState[]> {
    if (transactionIds.length === 0) return [];
    const replies = await this.call(async (redis) => {
      const p = redis.pipeline();
      for (const tx of transactionIds) p.get(this.key(tx)).exists(this.publishedKey(tx));
      return pipelineReplies(await p.exec());
    });
    return Promise.all(
      transactionIds.map(async (tx, i) => {
        const raw = replies[2 * i] as string | null;
        return {
          result: raw === null ? undefined : await this.read(tx, raw),
          published: replies[2 * i + 1] === 1,
        };
      }),
    );
  }

  async markManyPublished(transactionIds: readonly string[]): Promise<void> {
    if (transactionIds.length === 0) return;
    await this.call(async (redis) => {
      const p = redis.pipeline();
      for (const tx of transactionIds) p.set(this.publishedKey(tx), '1', 'EX', this.ttlSec);
      return pipelineReplies(await p.exec());
    });
  }

  async putIfAbsent(transactionId: string, result: AsyncScoreResult): Promise<AsyncScoreResult> {
    const key = this.key(transactionId);
    for (let attempt = 0; attempt < 2; attempt++) {
      const ok = await this.call((redis) => redis.set(key, JSON.stringify(result), 'EX', this.ttlSec, 'NX'));
      if (ok === 'OK') return result;
      const raw = await this.call((redis) => redis.get(key));
      if (raw === null) continue; // expired in between: try again
      const stored = await this.read(transactionId, raw);
      if (stored !== undefined) return stored;
      // it was corrupt and is now deleted: try again
    }
    throw new AppError('dependency_unavailable', 'The result store (Redis) did not keep the result.', {
      transient: true,
      retryAfterSec: 1,
    });
  }

  async markPublished(transactionId: string): Promise<void> {
    await this.call((redis) => redis.set(this.publishedKey(transactionId), '1', 'EX', this.ttlSec));
  }

  /** Parses a stored record; a corrupt one is reported, deleted if unchanged, and read as absent. */
  private async read(transactionId: string, raw: string): Promise<AsyncScoreResult | undefined> {
    const parsed = parseStoredResult(transactionId, raw);
    if (!('corrupt' in parsed)) return parsed;
    this.onCorrupt({ transactionId, reason: parsed.corrupt, bytes: Buffer.byteLength(raw) });
    await this.call((redis) => redis.eval(DELETE_IF_SAME, 1, this.key(transactionId), raw));
    return undefined;
  }
}
