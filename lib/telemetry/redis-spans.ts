/**
 * Redis dependency spans. ioredis 6 publishes every command on the `ioredis:command` diagnostics tracing
 * channel; the instrumentations `applicationinsights` bundles cover `redis`/`@redis/client` only, so this
 * subscriber turns ioredis commands into CLIENT spans (`db.system.name=redis`) and durations. Subscribing
 * by channel name works whenever it happens, regardless of module load order. Command arguments are never
 * recorded: keys carry user ids.
 */
import * as dc from 'node:diagnostics_channel';
import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { errorType } from './tracing';

/** What ioredis puts on the channel's context object (see ioredis `built/tracing.d.ts`). */
interface CommandContext {
  command?: string;
  database?: number;
  serverAddress?: string;
  serverPort?: number;
  error?: unknown;
  [SPAN]?: { span: Span | undefined; start: number };
}
const SPAN = Symbol('redisSpan');

/** Options of {@link traceRedisCommands}. */
export interface RedisTracingOptions {
  /** Creates spans when set (tracing on). */
  readonly tracer?: Tracer;
  /** Called with each command's duration, ms, and whether it succeeded. */
  readonly onDuration?: (ms: number, ok: boolean) => void;
  /** Monotonic clock, ms. Default `performance.now`. */
  readonly now?: () => number;
}

/** Subscribes to ioredis command tracing. @returns the unsubscribe function. */
export function traceRedisCommands(options: RedisTracingOptions): () => void {
  const now = options.now ?? (() => performance.now());
  const channel = dc.tracingChannel<unknown, CommandContext>('ioredis:command');
  const finish = (ctx: CommandContext): void => {
    const t = ctx[SPAN];
    if (t === undefined) return;
    ctx[SPAN] = undefined;
    const ok = ctx.error === undefined;
    options.onDuration?.(now() - t.start, ok);
    if (t.span !== undefined) {
      if (!ok) {
        t.span.setAttribute('error.type', errorType(ctx.error));
        t.span.setStatus({ code: SpanStatusCode.ERROR, message: errorType(ctx.error) });
      }
      t.span.end();
    }
  };
  const handlers: dc.TracingChannelSubscribers<CommandContext> = {
    start(ctx) {
      const active = context.active();
      // only commands made on behalf of a traced operation: no root spans for background reconnects and pings
      const parent = options.tracer === undefined ? undefined : trace.getSpan(active);
      // only a recorded parent gets children: an unsampled trace costs no attributes and no span
      const span =
        parent?.isRecording() === true
          ? (options.tracer as Tracer).startSpan(
              ctx.command ?? 'redis',
              {
                kind: SpanKind.CLIENT,
                attributes: {
                  'db.system.name': 'redis',
                  'db.operation.name': (ctx.command ?? '').toUpperCase(),
                  // undefined values are dropped by the SDK
                  'db.namespace': ctx.database === undefined ? undefined : String(ctx.database),
                  'server.address': ctx.serverAddress,
                  'server.port': ctx.serverPort,
                },
              },
              active,
            )
          : undefined;
      ctx[SPAN] = { span, start: now() };
    },
    end(ctx) {
      if (ctx.error !== undefined) finish(ctx); // a synchronous throw: no async events follow
    },
    asyncStart() {},
    asyncEnd(ctx) {
      finish(ctx);
    },
    error() {},
  };
  channel.subscribe(handlers);
  return () => channel.unsubscribe(handlers);
}
