/**
 * A loopback AMQP 1.0 peer for the real `@azure/service-bus` client, built with rhea: it accepts SASL
 * (ANONYMOUS or PLAIN), answers CBS `put-token` requests on `$cbs` (status 202), accepts sender links to
 * any entity and records every transfer it settles. Each transfer can be accepted, rejected, or answered by
 * detaching the link with an error. Connect the SDK with {@link AmqpPeer.connectionString}
 * (`UseDevelopmentEmulator=true`: plain TCP, no TLS).
 */
import { once } from 'node:events';
import type { AddressInfo, Server } from 'node:net';
import {
  create_container,
  type Connection,
  type Container,
  type Delivery,
  type EventContext,
  type Message,
  type Sender,
} from 'rhea';

/** A message the peer received on an entity link (never `$cbs`). */
export interface AmqpTransfer {
  /** The link's target address (the queue or topic name). */
  readonly address: string;
  readonly messageId: unknown;
  readonly correlationId: unknown;
  readonly contentType: string | undefined;
  readonly applicationProperties: Readonly<Record<string, unknown>>;
  /** The body: a data section is decoded as UTF-8 JSON when it parses, else kept as the raw section. */
  readonly body: unknown;
  /** What the peer answered. */
  readonly outcome: 'accepted' | 'rejected' | 'detached';
  /**
   * Accepted but dropped by duplicate detection (its message id was accepted within `duplicateWindowMs`), as
   * Service Bus does: the sender sees success, subscribers never see it.
   */
  readonly duplicate: boolean;
  /** The peer's clock when it arrived, ms. */
  readonly at: number;
}

/** How the peer settles one transfer. */
export type AmqpVerdict =
  | { readonly kind: 'accept' }
  | { readonly kind: 'reject'; readonly condition: string; readonly description: string }
  | { readonly kind: 'detach'; readonly condition: string; readonly description: string };

/** A CBS token the peer was given. */
export interface CbsToken {
  readonly audience: unknown;
  readonly type: unknown;
}

/** Options of {@link AmqpPeer.start}. */
export interface AmqpPeerOptions {
  /** Decides each transfer (default: accept). May be replaced later through {@link AmqpPeer.verdict}. */
  readonly verdict?: (t: Transfer) => AmqpVerdict;
  /** Duplicate-detection window of every entity, ms; 0 = off (default). Mutable: {@link AmqpPeer.duplicateWindowMs}. */
  readonly duplicateWindowMs?: number;
  /** The peer's clock, ms. Default `Date.now`. */
  readonly now?: () => number;
}

/** A transfer as the verdict sees it. */
export type Transfer = Omit<AmqpTransfer, 'outcome' | 'duplicate' | 'at'>;

const accept: AmqpVerdict = { kind: 'accept' };

function decodeBody(body: unknown): unknown {
  const section = body as { typecode?: number; content?: unknown } | undefined;
  if (section?.typecode === 0x75 && Buffer.isBuffer(section.content)) {
    try {
      return JSON.parse(section.content.toString('utf8')) as unknown;
    } catch {
      return section.content;
    }
  }
  return body;
}

/** The peer: listening on 127.0.0.1 on a free port. */
export class AmqpPeer {
  /** Every entity transfer, in arrival order, with its outcome. */
  readonly transfers: AmqpTransfer[] = [];
  /** Every CBS token put. */
  readonly tokens: CbsToken[] = [];
  /** Decides how the next transfers are settled. */
  verdict: (t: Transfer) => AmqpVerdict;
  /** Duplicate-detection window, ms (0 = off). */
  duplicateWindowMs: number;
  private readonly now: () => number;
  private readonly seen = new Map<string, number>(); // address + message id → when first accepted
  private readonly waiters = new Set<() => void>();
  private readonly connections = new Set<Connection>();

  private constructor(
    private readonly server: Server,
    options: AmqpPeerOptions,
  ) {
    this.verdict = options.verdict ?? (() => accept);
    this.duplicateWindowMs = options.duplicateWindowMs ?? 0;
    this.now = options.now ?? Date.now;
  }

  /** Starts listening on a free loopback port. */
  static async start(options: AmqpPeerOptions = {}): Promise<AmqpPeer> {
    const container = create_container({ id: 'amqp-peer', autoaccept: false }); // settled by the verdict
    container.sasl_server_mechanisms.enable_anonymous();
    container.sasl_server_mechanisms.enable_plain(() => true);
    const server = container.listen({ port: 0, host: '127.0.0.1' }) as unknown as Server;
    await once(server, 'listening');
    const peer = new AmqpPeer(server, options);
    peer.wire(container);
    return peer;
  }

  /** The port the peer listens on. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** A connection string for `new ServiceBusClient(...)`: plain TCP to this peer. */
  get connectionString(): string {
    return `Endpoint=sb://127.0.0.1:${this.port}/;SharedAccessKeyName=peer;SharedAccessKey=cGVlcg==;UseDevelopmentEmulator=true`;
  }

  /** Transfers to one entity that the peer accepted (duplicates included: what senders sent successfully). */
  accepted(address: string): AmqpTransfer[] {
    return this.transfers.filter((t) => t.address === address && t.outcome === 'accepted');
  }

  /** Transfers to one entity that subscribers would get: accepted and not dropped as duplicates. */
  delivered(address: string): AmqpTransfer[] {
    return this.accepted(address).filter((t) => !t.duplicate);
  }

  /**
   * Resolves once `check()` holds, re-checked on every transfer; fails after `timeoutMs` naming `what`.
   * Event-driven: no polling.
   */
  async until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    if (check()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (transfers: ${this.transfers.length})`));
      }, timeoutMs);
      const wake = (): void => {
        if (!check()) return;
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
    });
  }

  /** Closes every connection and stops listening. */
  async stop(): Promise<void> {
    for (const c of this.connections) c.close();
    this.server.close();
    for (const c of this.connections) if (c.is_open()) c.socket?.destroy();
    await once(this.server, 'close').catch(() => undefined);
  }

  private wire(container: Container): void {
    container.on('connection_open', (ctx: EventContext) => {
      const c = ctx.connection;
      this.connections.add(c);
      c.on('disconnected', () => this.connections.delete(c));
    });
    container.on('disconnected', () => undefined); // a client going away is not an error of the peer
    container.on('error', () => undefined);
    container.on('message', (ctx: EventContext) => {
      const receiver = ctx.receiver;
      const message = ctx.message;
      const delivery = ctx.delivery;
      if (receiver === undefined || message === undefined || delivery === undefined) return;
      const address = String(receiver.target?.address ?? '');
      if (address === '$cbs') return this.answerCbs(ctx.connection, message, delivery);
      const seen = {
        address,
        messageId: message.message_id,
        correlationId: message.correlation_id,
        contentType: message.content_type,
        applicationProperties: { ...(message.application_properties ?? {}) },
        body: decodeBody(message.body),
      };
      const v = this.verdict(seen);
      if (v.kind === 'accept') delivery.accept();
      else if (v.kind === 'reject') delivery.reject({ condition: v.condition, description: v.description });
      else receiver.close({ condition: v.condition, description: v.description });
      const at = this.now();
      let duplicate = false;
      if (v.kind === 'accept' && this.duplicateWindowMs > 0) {
        const id = `${address}\n${String(seen.messageId)}`;
        const first = this.seen.get(id);
        duplicate = first !== undefined && at - first < this.duplicateWindowMs;
        if (!duplicate) this.seen.set(id, at);
      }
      const outcome = v.kind === 'accept' ? 'accepted' : v.kind === 'reject' ? 'rejected' : 'detached';
      this.transfers.push({ ...seen, outcome, duplicate, at });
      for (const w of [...this.waiters]) w();
    });
  }

  private answerCbs(connection: Connection, message: Message, delivery: Delivery): void {
    delivery.accept();
    const props = message.application_properties ?? {};
    this.tokens.push({ audience: props['name'], type: props['type'] });
    const replyTo = String(message.reply_to ?? '');
    const sender = connection.find_sender((s: Sender) => s.name === replyTo || s.target?.address === replyTo);
    sender?.send({
      body: undefined,
      correlation_id: message.message_id,
      application_properties: { 'status-code': 202, 'status-description': 'Accepted' },
    });
  }
}
