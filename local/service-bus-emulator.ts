/**
 * The embedded Service Bus of `npm start`: delivers queue messages to the app's `serviceBusTrigger`
 * functions exactly as the Functions runtime would (same handler, body and trigger metadata through
 * `InvocationContext`), with peek-lock, delivery counts, redelivery on throw and dead-lettering, and
 * captures the functions' Service Bus outputs. A `cardinality: 'many'` trigger gets batches as the
 * Service Bus extension's batch receive loop sends them: up to `maxMessageBatchSize` messages per call
 * (whatever is waiting, without waiting for more), the bodies as a collection and the per-message metadata
 * as `…Array` keys, one batch at a time; a throw abandons the whole batch, success completes all of it. Also serves the `/local/queues/…` and `/local/topics/…` endpoints.
 */
import type * as http from 'node:http';
import type { BusMessage, InProcessBus } from './in-process-bus';
import type { FunctionInfo, LocalHost } from './host';
import { resolveAppSettings } from './invoke';
import { invocationTraceContext } from './trace-context';

/** Options of {@link ServiceBusEmulator}. */
export interface ServiceBusEmulatorOptions {
  readonly bus: InProcessBus;
  /** Deliveries before a message is dead-lettered (the queue's `maxDeliveryCount`). Default 10. */
  readonly maxDeliveryCount?: number;
  /** `maxDeliveryCount` of particular queues (the case intake's is higher). */
  readonly maxDeliveryCountByQueue?: Readonly<Record<string, number>>;
  /** Concurrent deliveries per queue for `cardinality: 'one'` triggers (host.json `maxConcurrentCalls`). Default 16. */
  readonly maxConcurrentCalls?: number;
  /**
   * Messages a `cardinality: 'many'` trigger waits for before it is called (host.json `minMessageBatchSize`), at most
   * `maxBatchWaitMs` after its first message (host.json `maxBatchWaitTime`), as the Service Bus extension does. Default
   * 1: a batch is whatever is waiting.
   */
  readonly minMessageBatchSize?: number;
  /** See `minMessageBatchSize`. Default 30 s (the extension's). */
  readonly maxBatchWaitMs?: number;
  /** Most messages per call of a `cardinality: 'many'` trigger (host.json `maxMessageBatchSize`). Default 1000. */
  readonly maxMessageBatchSize?: number;
  /**
   * Batches delivered at once per `cardinality: 'many'` trigger. Default 1, as the Service Bus extension's
   * batch receive loop runs them (one instance); more stands for more instances.
   */
  readonly maxConcurrentBatches?: number;
  /** Settings for `%NAME%` binding expressions. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  readonly log?: (line: string) => void;
  /** Largest POSTed message body, bytes. Default 256 KiB (Service Bus standard tier). */
  readonly maxMessageBytes?: number;
}

interface Trigger {
  readonly fn: FunctionInfo;
  readonly queue: string;
  /** `cardinality: 'many'`: delivered in batches. */
  readonly many: boolean;
}

function json(res: http.ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' });
  res.end(JSON.stringify(body));
  return true;
}

function view(m: BusMessage): Record<string, unknown> {
  let body = m.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body) as unknown;
    } catch {
      /* not JSON: shown as text */
    }
  }
  return {
    messageId: m.messageId,
    correlationId: m.correlationId,
    body,
    applicationProperties: m.applicationProperties,
    ...(m.deadLetterReason === undefined
      ? {}
      : { deadLetterReason: m.deadLetterReason, deadLetterErrorDescription: m.deadLetterErrorDescription }),
  };
}

/** Delivers in-process queue messages to Service Bus–triggered functions. */
export class ServiceBusEmulator {
  private host: LocalHost | undefined;
  private triggers: Trigger[] = [];
  private stopped = false;
  private readonly loops: Promise<void>[] = [];
  private readonly maxDeliveryCount: number;
  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly batches: number;
  private readonly env: NodeJS.ProcessEnv;
  private readonly log: (line: string) => void;
  private readonly maxMessageBytes: number;
  private readonly settledWaiters = new Set<() => void>();

  constructor(private readonly options: ServiceBusEmulatorOptions) {
    this.maxDeliveryCount = options.maxDeliveryCount ?? 10;
    this.concurrency = options.maxConcurrentCalls ?? 16;
    this.batchSize = options.maxMessageBatchSize ?? 1000;
    this.batches = options.maxConcurrentBatches ?? 1;
    this.env = options.env ?? process.env;
    this.log = options.log ?? (() => undefined);
    this.maxMessageBytes = options.maxMessageBytes ?? 256 * 1024;
  }

  /** The bus behind the emulator. */
  get bus(): InProcessBus {
    return this.options.bus;
  }

  /** Starts delivering to the host's `serviceBusTrigger` functions. */
  start(host: LocalHost): void {
    this.host = host;
    this.triggers = host.functions
      .filter((f) => f.triggerType === 'serviceBusTrigger')
      .map((fn) => ({
        fn,
        queue: resolveAppSettings(String(fn.trigger['queueName'] ?? ''), this.env),
        many: fn.trigger['cardinality'] === 'many',
      }));
    for (const t of this.triggers)
      for (let i = 0; i < (t.many ? this.batches : this.concurrency); i++) this.loops.push(this.loop(t));
  }

  /** Queue names that have a trigger. */
  get triggerQueues(): string[] {
    return this.triggers.map((t) => t.queue);
  }

  /**
   * Resolves when every trigger queue is empty and nothing is being delivered, re-checked after each
   * delivery settles (no polling). Rejects after `timeoutMs` (default 120 s), naming what is still pending.
   */
  async idle(timeoutMs = 120_000): Promise<void> {
    const pending = (): string[] =>
      this.triggers
        .filter((t) => this.bus.messages(t.queue).length > 0 || this.bus.inFlight(t.queue) > 0)
        .map(
          (t) => `${t.queue}: ${this.bus.messages(t.queue).length} waiting, ${this.bus.inFlight(t.queue)} in flight`,
        );
    if (pending().length === 0) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settledWaiters.delete(check);
        reject(new Error(`the embedded Service Bus was not idle after ${timeoutMs} ms (${pending().join('; ')})`));
      }, timeoutMs);
      const check = (): void => {
        if (pending().length > 0) return;
        clearTimeout(timer);
        this.settledWaiters.delete(check);
        resolve();
      };
      this.settledWaiters.add(check);
    });
  }

  /** Stops delivering; messages in flight finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async loop(t: Trigger): Promise<void> {
    while (!this.stopped) {
      if (t.many) {
        const batch: BusMessage[] = [];
        this.receiveInto(t, batch);
        if (batch.length > 0) await this.fill(t, batch);
        if (batch.length > 0) await this.deliverBatch(t, batch);
        else await this.bus.waitForMessage(t.queue, 50);
        continue;
      }
      const m = this.bus.receive(t.queue);
      if (m === undefined) {
        await this.bus.waitForMessage(t.queue, 50);
        continue;
      }
      await this.deliver(t, m);
    }
  }

  private receiveInto(t: Trigger, batch: BusMessage[]): void {
    for (let m; batch.length < this.batchSize && (m = this.bus.receive(t.queue)) !== undefined;) batch.push(m);
  }

  /** Waits for `minMessageBatchSize` messages, at most `maxBatchWaitMs` from now (the first message's arrival). */
  private async fill(t: Trigger, batch: BusMessage[]): Promise<void> {
    const min = Math.min(this.options.minMessageBatchSize ?? 1, this.batchSize);
    if (batch.length >= min) return;
    const until = performance.now() + (this.options.maxBatchWaitMs ?? 30_000);
    for (let left = until - performance.now(); batch.length < min && left > 0 && !this.stopped;) {
      await this.bus.waitForMessage(t.queue, Math.min(left, 50));
      this.receiveInto(t, batch);
      left = until - performance.now();
    }
  }

  /** One call of a `cardinality: 'many'` trigger: bodies as a collection, metadata as `…Array` keys. */
  private async deliverBatch(t: Trigger, batch: readonly BusMessage[]): Promise<void> {
    const host = this.host as LocalHost;
    try {
      const r = await host.invoke(
        t.fn.name,
        batch.map((m) => m.body),
        {
          MessageIdArray: batch.map((m) => m.messageId),
          DeliveryCountArray: batch.map((m) => m.deliveryCount),
          EnqueuedTimeUtcArray: batch.map((m) => m.enqueuedTimeUtc),
          CorrelationIdArray: batch.map((m) => m.correlationId ?? null),
          ApplicationPropertiesArray: batch.map((m) => m.applicationProperties),
        },
        {
          cardinality: 'many',
          // the first producer's trace is the invocation's parent; every producer is linked (invocation-tracing)
          traceContext: invocationTraceContext(firstTraceparent(batch)),
        },
      );
      this.publishOutputs(t.fn, r.outputData);
      for (const m of batch) this.bus.complete(t.queue, m);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.log(
        `[servicebus] ${t.fn.name}: a batch of ${batch.length} message(s) failed (${reason}); abandoning all of them`,
      );
      for (const m of batch) this.bus.abandon(t.queue, m, this.deliveries(t.queue), reason);
    } finally {
      for (const w of [...this.settledWaiters]) w();
    }
  }

  private async deliver(t: Trigger, m: BusMessage): Promise<void> {
    const host = this.host as LocalHost;
    try {
      const r = await host.invoke(
        t.fn.name,
        m.body,
        {
          MessageId: m.messageId,
          DeliveryCount: m.deliveryCount,
          EnqueuedTimeUtc: m.enqueuedTimeUtc,
          ...(m.correlationId === undefined ? {} : { CorrelationId: m.correlationId }),
          ApplicationProperties: m.applicationProperties,
        },
        {
          // the producer's trace, as the Service Bus extension reads it from the message
          traceContext: invocationTraceContext(
            m.applicationProperties['traceparent'] ?? m.applicationProperties['Diagnostic-Id'],
          ),
        },
      );
      this.publishOutputs(t.fn, r.outputData);
      this.bus.complete(t.queue, m);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.log(
        `[servicebus] ${t.fn.name}: delivery ${m.deliveryCount} of message ${m.messageId} failed (${reason}); abandoning`,
      );
      this.bus.abandon(t.queue, m, this.deliveries(t.queue), reason);
    } finally {
      for (const w of [...this.settledWaiters]) w();
    }
  }

  private deliveries(queue: string): number {
    return this.options.maxDeliveryCountByQueue?.[queue] ?? this.maxDeliveryCount;
  }

  /** Sends what the function set on its Service Bus output bindings (arrays are several messages). */
  private publishOutputs(fn: FunctionInfo, outputs: Record<string, unknown>): void {
    for (const [name, value] of Object.entries(outputs)) {
      const binding = (fn.metadata.bindings as Record<string, Record<string, unknown>>)[name];
      if (binding?.['type'] !== 'serviceBus') continue;
      const topic = binding['topicName'];
      const entity = resolveAppSettings(String(topic ?? binding['queueName'] ?? ''), this.env);
      for (const body of Array.isArray(value) ? value : [value]) this.bus.send(entity, { body }, topic !== undefined);
    }
  }

  /** `extraRoutes` handler for the local host: the `/local/...` endpoints. */
  route = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const m = /^\/local\/(queues|topics)\/([A-Za-z0-9._-]{1,260})\/(messages|deadletter)$/.exec(url.pathname);
    if (m === null) return false;
    const [, kind, name, what] = m as unknown as [string, string, string, string];
    if (req.method === 'GET') {
      if (what === 'deadletter' && kind === 'topics') return json(res, 404, { status: 404, title: 'Not found' });
      const list = what === 'deadletter' ? this.bus.deadLettered(name) : this.bus.messages(name);
      return json(res, 200, list.map(view));
    }
    if (req.method === 'POST' && kind === 'queues' && what === 'messages') {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of req as AsyncIterable<Buffer>) {
        size += c.length;
        if (size > this.maxMessageBytes)
          return json(res, 413, {
            status: 413,
            title: 'Payload too large',
            detail: `Messages are limited to ${this.maxMessageBytes} bytes.`,
          });
        chunks.push(c);
      }
      const header = (h: string): string | undefined =>
        typeof req.headers[h] === 'string' ? (req.headers[h] as string) : undefined;
      const messageId = header('x-message-id');
      const correlationId = header('x-correlation-id');
      this.bus.send(name, {
        body: Buffer.concat(chunks).toString('utf8'),
        ...(messageId === undefined ? {} : { messageId }),
        ...(correlationId === undefined ? {} : { correlationId }),
      });
      return json(res, 202, { queued: true, queue: name });
    }
    res.writeHead(405, {
      allow: kind === 'queues' && what === 'messages' ? 'GET, POST' : 'GET',
      'content-type': 'application/problem+json',
    });
    res.end(JSON.stringify({ status: 405, title: 'Method not allowed' }));
    return true;
  };
}

/** The first `traceparent` / `Diagnostic-Id` application property of a batch's messages, if any. */
function firstTraceparent(batch: readonly BusMessage[]): unknown {
  for (const m of batch) {
    const tp = m.applicationProperties['traceparent'] ?? m.applicationProperties['Diagnostic-Id'];
    if (tp !== undefined) return tp;
  }
  return undefined;
}
