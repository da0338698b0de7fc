import type { Redis } from 'ioredis';
import { AppError } from '../errors/errors';
import { EMPTY_VELOCITY, type UserProfile } from '../domain/user-context';
import type { PaymentEvent } from '../domain/payment-event';
import type { ContextCache, ContextKey } from './cache-tier';
import type { ContextLookup, ContextProvider, LookupOptions } from './context-provider';
import type { ContextSource, WritableContextSource } from './context-source';
import type { CachedContext } from './context-value';
import type { ContextEvents, DegradedReason } from './events';
import type { InvalidationBus } from './invalidation';
import type { ContextKeys } from './keys';
import type { L1Cache } from './l1-cache';
import { SingleFlight } from './single-flight';
import { TieredContextCache } from './tiered-cache';
import type { VelocityFigures, VelocityStore } from './velocity';
import { BudgetExceededError, withTimeout } from '../platform/with-timeout';

/** The shared part of the context store: Redis, or its in-process stand-in. */
export interface ContextRemote {
  /** How logs name it, e.g. `redis (entra)` or `in-process`. Never holds a URL or a secret. */
  readonly description: string;
  readonly l2: ContextCache;
  readonly velocity: VelocityStore;
  readonly source: ContextSource;
  readonly bus?: InvalidationBus;
  /** `false` while the store is known to be unreachable: lookups then degrade at once, without a call. */
  available(): boolean;
  /** The Redis client behind the store, shared with other Redis users of the engine (absent for in-process). */
  readonly client?: Redis;
  dispose(): Promise<void>;
}

/** Options of a {@link CachedContextProvider}. */
export interface CachedContextProviderOptions {
  readonly keys: ContextKeys;
  readonly l1: L1Cache;
  /** Budget of the request-path round trip (context GET + velocity script), ms (`REDIS_TIMEOUT_MS`, default 25). */
  readonly timeoutMs: number;
  /** Budget of an origin load on a miss, ms (default: `timeoutMs` for the Redis origin, `CONTEXT_SOURCE_TIMEOUT_MS` for HTTP). */
  readonly originTimeoutMs: number;
  /** Wall clock, epoch ms: velocity windows are measured on it (never on the client's timestamp). Default `Date.now`. */
  readonly now?: () => number;
  readonly on?: Partial<ContextEvents>;
}

/**
 * The user-context provider of the scoring path: L1 LRU → L2 (Redis) → origin, plus velocity.
 *
 * One lookup = one round trip: the L2 GET (skipped on an L1 hit) and the velocity script are issued
 * together (pipelined) within `timeoutMs`. On a miss, one origin call per key however many requests miss
 * at once (single-flight); the result fills L1 and, in the background, L2. If the store is down, slow or
 * failing, the lookup answers `degraded` with the L1 profile if any (else none) and empty velocity; it
 * never throws and never waits on a dead connection. The remote can be attached later (store set up in
 * the background); until then every lookup is degraded.
 */
export class CachedContextProvider implements ContextProvider {
  private remote: ContextRemote | undefined;
  private tiered: TieredContextCache | undefined;
  private readonly flights = new SingleFlight<CachedContext>();
  private readonly now: () => number;
  private disposed = false;

  constructor(
    private readonly options: CachedContextProviderOptions,
    remote?: ContextRemote,
  ) {
    this.now = options.now ?? Date.now;
    if (remote !== undefined) this.attach(remote);
  }

  /** Connects the shared store (once). */
  attach(remote: ContextRemote): void {
    if (this.remote !== undefined) throw new Error('a context store is already attached');
    if (this.disposed) {
      void remote.dispose();
      return;
    }
    this.remote = remote;
    this.tiered = new TieredContextCache({
      l1: this.options.l1,
      l2: remote.l2,
      ...(remote.bus === undefined ? {} : { bus: remote.bus }),
    });
  }

  /** Whether `dispose` was called. */
  get isDisposed(): boolean {
    return this.disposed;
  }

  /**
   * The engine's Redis client once the store is set up (`undefined` while pending, or with the
   * in-process store). Other components (result store, model pointer) share this one connection.
   */
  get redisClient(): Redis | undefined {
    return this.remote?.client;
  }

  /** How logs name the store in use (`pending` until one is attached). */
  get description(): string {
    return this.remote?.description ?? 'pending';
  }

  async lookup(event: PaymentEvent, options: LookupOptions = {}): Promise<ContextLookup> {
    const key = this.options.keys.ctx(event.userId, event.sessionId);
    const { remote, tiered } = this;
    if (remote === undefined || tiered === undefined || !remote.available()) return this.degraded(key, 'unavailable');
    const payment = {
      userId: event.userId,
      transactionId: event.transactionId,
      amount: event.amount,
      country: event.country,
      at: this.now(),
    };
    let found: Awaited<ReturnType<TieredContextCache['lookup']>>;
    let velocity: VelocityFigures;
    try {
      [found, velocity] = await withTimeout(
        Promise.all([tiered.lookup(key), remote.velocity.record(payment)]),
        options.timeoutMs ?? this.options.timeoutMs,
      );
    } catch (err) {
      return this.degraded(key, err instanceof BudgetExceededError ? 'timeout' : 'error');
    }
    if (found !== undefined)
      return { context: { profile: found.value.profile, velocity }, cache: 'hit', tier: found.tier };
    try {
      const value = await this.flights.run(key.key, () => this.loadOrigin(key, event.sessionId, remote, tiered));
      return { context: { profile: value.profile, velocity }, cache: 'miss' };
    } catch {
      this.options.on?.degraded?.({ reason: 'origin' });
      return { context: { profile: this.options.l1.peek(key)?.profile ?? null, velocity }, cache: 'degraded' };
    }
  }

  /**
   * Drops a user's cached context from both tiers on every instance (call after the profile changed).
   * @throws AppError `dependency_unavailable` when the store cannot be reached.
   */
  async invalidate(userId: string): Promise<void> {
    if (this.tiered === undefined) throw new AppError('dependency_unavailable', 'The context store is not connected.');
    try {
      await this.tiered.deleteUser(userId);
    } catch (cause) {
      throw new AppError('dependency_unavailable', 'The context store could not be updated.', { cause });
    }
  }

  /**
   * Writes a profile to the origin (when it is writable), then invalidates the user's cached context.
   * @throws AppError `dependency_unavailable` when the store cannot be reached or the origin is read-only.
   */
  async writeProfile(userId: string, profile: UserProfile | null): Promise<void> {
    const source = this.remote?.source as Partial<WritableContextSource> | undefined;
    if (typeof source?.put !== 'function')
      throw new AppError('dependency_unavailable', 'The profile origin is not writable.');
    try {
      await source.put(userId, profile);
    } catch (cause) {
      throw new AppError('dependency_unavailable', 'The profile origin could not be updated.', { cause });
    }
    await this.invalidate(userId);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const r = this.remote;
    this.remote = undefined;
    this.tiered = undefined;
    await r?.dispose();
  }

  private degraded(key: ContextKey, reason: DegradedReason): ContextLookup {
    this.options.on?.degraded?.({ reason });
    return {
      context: { profile: this.options.l1.peek(key)?.profile ?? null, velocity: EMPTY_VELOCITY },
      cache: 'degraded',
    };
  }

  /** One origin load (single-flight per key). Fills L1 now and L2 in the background, unless an invalidation raced it. */
  private async loadOrigin(
    key: ContextKey,
    sessionId: string | undefined,
    remote: ContextRemote,
    tiered: TieredContextCache,
  ): Promise<CachedContext> {
    const hot = this.options.l1.peek(key);
    if (hot !== undefined) return hot;
    const epoch = tiered.epoch;
    const profile = await withTimeout(remote.source.load(key.userId, sessionId), this.options.originTimeoutMs);
    const value: CachedContext = { profile };
    if (tiered.epoch === epoch) {
      this.options.l1.put(key, value);
      remote.l2.set(key, value).catch(() => this.options.on?.writeFailed?.({ tier: 'l2' }));
    }
    return value;
  }
}
