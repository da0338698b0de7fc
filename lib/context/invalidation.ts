import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** An invalidation: drop one key, or every key of a user. `origin` is the publishing instance. */
export interface Invalidation {
  readonly origin: string;
  readonly userId: string;
  /** Full cache key; absent = every key of the user. */
  readonly key?: string;
}

/** Handlers of a bus subscription. */
export interface InvalidationHandlers {
  /** Another instance invalidated something. */
  readonly invalidate: (m: Invalidation) => void;
  /** The subscription was re-established: invalidations may have been missed, drop everything local. */
  readonly resync: () => void;
}

/** Tells the other instances to drop their L1 entries. Implementations share one contract suite. */
export interface InvalidationBus {
  /** This instance's id (messages it publishes carry it and are not delivered back to it). */
  readonly origin: string;
  publish(m: Omit<Invalidation, 'origin'>): Promise<void>;
  subscribe(handlers: InvalidationHandlers): void;
  dispose(): Promise<void>;
}

function parse(text: string): Invalidation | undefined {
  try {
    const m = JSON.parse(text) as Partial<Invalidation>;
    if (
      typeof m.origin !== 'string' ||
      typeof m.userId !== 'string' ||
      (m.key !== undefined && typeof m.key !== 'string')
    )
      return undefined;
    return { origin: m.origin, userId: m.userId, ...(m.key === undefined ? {} : { key: m.key }) };
  } catch {
    return undefined;
  }
}

/**
 * Redis pub/sub bus. Publishes on the shared client; listens on a dedicated subscriber connection
 * (re-subscribed automatically after a reconnect, which also triggers `resync`).
 */
export class RedisInvalidationBus implements InvalidationBus {
  readonly origin = randomUUID();
  private handlers: InvalidationHandlers | undefined;
  private wasReady = false;

  /**
   * @param publisher the shared client.
   * @param subscriber a connection of its own (e.g. `publisher.duplicate()`), owned by the bus from now on.
   * @param channel e.g. `ContextKeys.channel`.
   */
  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly channel: string,
  ) {
    subscriber.on('message', (ch: string, text: string) => {
      if (ch !== channel) return;
      const m = parse(text);
      if (m !== undefined && m.origin !== this.origin) this.handlers?.invalidate(m);
    });
    subscriber.on('ready', () => {
      if (this.wasReady) this.handlers?.resync();
      this.wasReady = true;
    });
    subscriber.on('error', () => undefined); // state changes are reported by the connection owner
  }

  /** Subscribes (waits for the subscription when the connection is up; otherwise it happens on connect). */
  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
  }

  async publish(m: Omit<Invalidation, 'origin'>): Promise<void> {
    await this.publisher.publish(this.channel, JSON.stringify({ origin: this.origin, ...m }));
  }

  subscribe(handlers: InvalidationHandlers): void {
    this.handlers = handlers;
  }

  async dispose(): Promise<void> {
    this.handlers = undefined;
    this.subscriber.disconnect();
    await Promise.resolve();
  }
}

/** In-process hub connecting {@link MemoryInvalidationBus}es (the in-process store; tests of several instances). */
export class MemoryInvalidationHub {
  private readonly buses = new Set<MemoryInvalidationBus>();
  /** A new bus on this hub (one per instance). */
  bus(): MemoryInvalidationBus {
    const b = new MemoryInvalidationBus(this);
    this.buses.add(b);
    return b;
  }
  /** @internal */ deliver(m: Invalidation): void {
    for (const b of this.buses) if (b.origin !== m.origin) b.receive(m);
  }
  /** @internal */ remove(b: MemoryInvalidationBus): void {
    this.buses.delete(b);
  }
}

/** A bus on a {@link MemoryInvalidationHub}; delivery is asynchronous (next microtask), like a network bus. */
export class MemoryInvalidationBus implements InvalidationBus {
  readonly origin = randomUUID();
  private handlers: InvalidationHandlers | undefined;
  constructor(private readonly hub: MemoryInvalidationHub) {}
  publish(m: Omit<Invalidation, 'origin'>): Promise<void> {
    const msg: Invalidation = { origin: this.origin, ...m };
    queueMicrotask(() => this.hub.deliver(msg));
    return Promise.resolve();
  }
  subscribe(handlers: InvalidationHandlers): void {
    this.handlers = handlers;
  }
  /** @internal */ receive(m: Invalidation): void {
    this.handlers?.invalidate(m);
  }
  dispose(): Promise<void> {
    this.handlers = undefined;
    this.hub.remove(this);
    return Promise.resolve();
  }
}
