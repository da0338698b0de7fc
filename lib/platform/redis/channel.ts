/**
 * One Redis pub/sub channel heard on a connection of its own, for the stores that announce their changes
 * (list entries, ruleset and model fleet pointers). The connection is a duplicate of the shared client that
 * queues its one SUBSCRIBE until connected (offline queue, no retry limit, no command timeout); a subscribe
 * waits for it at most {@link SUBSCRIBE_WAIT_MS}, and a connection not subscribed in time is dropped so that
 * the next call (the stores' reconcile loops) starts again. Connection errors are swallowed: the callers'
 * periodic re-reads cover a subscription that is down; a reconnect is reported, as messages may have been
 * missed meanwhile.
 */
import type { Redis } from 'ioredis';
import { unrefTimers, type Timers } from '../timers';
import { redisCall, type RedisCall } from './call';
import { redisCas, type CasAttempt, type CasTarget } from './cas';

/** How long a subscribe waits for the SUBSCRIBE to be confirmed, ms. */
export const SUBSCRIBE_WAIT_MS = 2000;

/** What a subscription delivers. */
export interface RedisChannelHandlers {
  /** Each message on the channel, as sent; a throw (e.g. a message not in the caller's format) is ignored. */
  readonly onMessage: (text: string) => void;
  /** The connection is ready again after having been ready: messages may have been missed meanwhile. */
  readonly onReconnect?: () => void;
}

/** Bounds of a subscription (tests shorten or drive them). */
export interface RedisChannelOptions {
  /** How long a subscribe waits, ms. Default {@link SUBSCRIBE_WAIT_MS}. */
  readonly waitMs?: number;
  /** Default {@link unrefTimers} (the wait never keeps the process alive). */
  readonly timers?: Timers;
}

/** A subscription to one channel on a duplicate of the shared client, made on the first {@link subscribe}. */
export class RedisChannelSubscription {
  private subscriber: Redis | undefined;
  /** The pending or done subscription (later callers wait for the same one). */
  private subscribing: Promise<boolean> | undefined;
  private disposed = false;
  private readonly waitMs: number;
  private readonly timers: Timers;

  /**
   * @param client the engine's shared client, or `undefined` while it is not set up yet (subscribe then says false).
   * @param channel the channel, e.g. `scoring:list:v1:changed`.
   */
  constructor(
    private readonly client: () => Redis | undefined,
    readonly channel: string,
    private readonly handlers: RedisChannelHandlers,
    options: RedisChannelOptions = {},
  ) {
    this.waitMs = options.waitMs ?? SUBSCRIBE_WAIT_MS;
    this.timers = options.timers ?? unrefTimers;
  }

  /**
   * Subscribes unless subscribed or subscribing (then answers as that one does). Resolves true once
   * subscribed; false when the client is not set up, after {@link dispose}, or when not subscribed in time.
   */
  subscribe(): Promise<boolean> {
    if (this.subscribing !== undefined) return this.subscribing;
    const client = this.disposed ? undefined : this.client();
    if (client === undefined) return Promise.resolve(false);
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
        this.handlers.onMessage(text);
      } catch {
        /* not in the caller's format */
      }
    });
    const onReconnect = this.handlers.onReconnect;
    let wasReady = false;
    if (onReconnect !== undefined)
      sub.on('ready', () => {
        if (wasReady) onReconnect();
        wasReady = true;
      });
    sub.on('error', () => undefined); // the callers' periodic re-reads cover a subscription that is down
    this.subscribing = this.confirm(sub);
    return this.subscribing;
  }

  /** Waits (bounded) for the SUBSCRIBE on `sub`; drops `sub` when it fails or is late. */
  private async confirm(sub: Redis): Promise<boolean> {
    let timer: unknown;
    const waited = new Promise<boolean>((resolve) => {
      timer = this.timers.setTimeout(() => resolve(false), this.waitMs);
    });
    const subscribed = sub.subscribe(this.channel).then(
      () => true,
      () => false,
    );
    const ok = await Promise.race([subscribed, waited]);
    this.timers.clearTimeout(timer);
    if (!ok && this.subscriber === sub) this.drop();
    return ok;
  }

  private drop(): void {
    const sub = this.subscriber;
    this.subscriber = undefined;
    this.subscribing = undefined;
    sub?.disconnect();
  }

  /** Closes the connection; later subscribes say false. */
  dispose(): void {
    this.disposed = true;
    this.drop();
  }
}

/** How a store's channel messages become what its listeners hear. */
export interface AnnouncementFormat<M> {
  /** A message's JSON, or undefined when it is not in the store's format (ignored). */
  readonly parse: (message: Record<string, unknown>) => M | undefined;
  /** What listeners hear after a reconnect (announcements may have been missed); none: nothing. */
  readonly reconnect?: M;
}

/**
 * The announcing side every Redis store shares (lists, artifact pointers): the store's call wrapper, its
 * listeners, one channel subscription that hands them each parsed message (and the reconnect notice), and the
 * compare-and-set that writes a `{ generation, state }` hash and publishes on the same channel in one step.
 */
export class RedisAnnouncements<M> {
  /** The store's call wrapper: failures are the store's `dependency_unavailable`. */
  readonly call: RedisCall;
  private readonly listeners = new Set<(m: M) => void>();
  private readonly subscription: RedisChannelSubscription;

  /**
   * @param redis the engine's shared client, or a getter for one not set up yet (calls then fail transiently).
   * @param channel e.g. `scoring:list:v1:changed`.
   * @param what the store's name in errors, e.g. `list store`.
   */
  constructor(
    redis: Redis | (() => Redis | undefined),
    readonly channel: string,
    what: string,
    format: AnnouncementFormat<M>,
  ) {
    const client = typeof redis === 'function' ? redis : () => redis;
    this.call = redisCall(client, what);
    const reconnect = format.reconnect;
    this.subscription = new RedisChannelSubscription(client, channel, {
      onMessage: (text) => {
        const parsed = JSON.parse(text) as unknown;
        if (parsed === null || typeof parsed !== 'object') return;
        const m = format.parse(parsed as Record<string, unknown>);
        if (m !== undefined) for (const l of this.listeners) l(m);
      },
      ...(reconnect === undefined ? {} : { onReconnect: () => this.listeners.forEach((l) => l(reconnect)) }),
    });
  }

  /** Adds a listener and subscribes (idempotent); resolves true once subscribed. */
  subscribe(listener: (m: M) => void): Promise<boolean> {
    this.listeners.add(listener);
    return this.subscription.subscribe();
  }

  /** Compare-and-set on `target.key`, announced on this channel (see {@link redisCas}). */
  cas<R>(target: Omit<CasTarget, 'channel'>, attempt: () => Promise<CasAttempt<R>>): Promise<R> {
    return redisCas(this.call, { ...target, channel: this.channel }, attempt);
  }

  dispose(): void {
    this.listeners.clear();
    this.subscription.dispose();
  }
}
