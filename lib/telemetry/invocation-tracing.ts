/**
 * The invocation root span: every function invocation runs inside a span whose parent is the Functions
 * host's trace context (`InvocationContext.traceContext.traceParent`), so the host's trace and ours are one.
 * Installed as a preInvocation hook: from the preload through `@azure/functions-core` when it is available
 * (in Azure, before `applicationinsights` registers its own hook, so ours wraps innermost), else by
 * `functions/hooks.ts` (the local host installs `@azure/functions-core` after the preload ran).
 */
import type { InvocationContext } from '@azure/functions';
import {
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Tracer,
} from '@opentelemetry/api';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';
import { errorType, otelTracer, tracingState } from './tracing';

let propagator: W3CTraceContextPropagator | undefined;
/**
 * The W3C propagator, made on first use. Both callers run only while tracing is on, when the tracing SDK
 * has already loaded `@opentelemetry/core`; with tracing off, start-up never loads it.
 */
function w3c(): W3CTraceContextPropagator {
  if (propagator === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const core = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
    propagator = new core.W3CTraceContextPropagator();
  }
  return propagator;
}

/** A version-00 `traceparent` as the Functions host and our own producers write it (lowercase hex). */
const CANONICAL_TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/**
 * The context a W3C `traceparent` (and `tracestate`) names; the root context if absent or malformed. The
 * common case (a canonical version-00 header without `tracestate`, as every invocation has) is parsed here
 * with one simple pattern; anything else goes through OpenTelemetry's W3C propagator, whose general parse
 * (a look-ahead pattern, then a hex check of each id) cost more than the span itself in a profile. Both give
 * the same context: `test/telemetry/traceparent.property.test.ts`.
 */
export function contextFromTraceparent(traceparent: unknown, tracestate?: unknown): Context {
  if (typeof traceparent !== 'string') return ROOT_CONTEXT;
  if (tracestate === undefined) {
    const m = CANONICAL_TRACEPARENT.exec(traceparent);
    if (m !== null) {
      const traceId = m[1] as string;
      const spanId = m[2] as string;
      if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return ROOT_CONTEXT;
      return trace.setSpanContext(ROOT_CONTEXT, {
        traceId,
        spanId,
        traceFlags: m[3] === '01' ? TraceFlags.SAMPLED : TraceFlags.NONE,
        isRemote: true,
      });
    }
  }
  const carrier: Record<string, string> = { traceparent };
  if (typeof tracestate === 'string') carrier['tracestate'] = tracestate;
  return w3c().extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
}

/** The active span's W3C `traceparent`, or `undefined` when no span is recording. */
export function activeTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  w3c().inject(context.active(), carrier, defaultTextMapSetter);
  return carrier['traceparent'];
}

type Handler = (...args: unknown[]) => unknown;

/**
 * What a preInvocation hook receives: `@azure/functions-core` names the handler `functionCallback`,
 * `app.hook.preInvocation`'s context `functionHandler`.
 */
export type PreInvocationLike = { readonly invocationContext: unknown } & (
  { functionCallback: Handler } | { functionHandler: Handler }
);

let installedEarly = false;

/**
 * Registers the invocation hook through `@azure/functions-core` when the module is available (inside the
 * Functions worker). Call it before `useAzureMonitor` registers its own hook (which re-activates the host's
 * context around the function): ours must run first so that it wraps innermost. The hook does nothing
 * while tracing is off. @returns whether it registered.
 */
export function installEarlyInvocationTracing(): boolean {
  if (installedEarly) return true;
  let core: { registerHook(name: 'preInvocation', cb: (ctx: PreInvocationLike) => void): unknown };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    core = require('@azure/functions-core') as typeof core;
  } catch {
    return false; // not inside the Functions worker (yet): functions/hooks.ts installs it
  }
  core.registerHook('preInvocation', (ctx) => {
    if (tracingState().enabled) wrap(ctx);
  });
  return (installedEarly = true);
}

/**
 * Whether the app needs {@link tracePreInvocation} as its own hook: tracing is on and the early hook is not
 * installed. Read once the preload ran (tracing starts there, before the function modules load).
 */
export function invocationHookWanted(): boolean {
  return !installedEarly && tracingState().enabled;
}

/** The preInvocation hook: runs the function inside the invocation root span (no-op when tracing is off). */
export function tracePreInvocation(ctx: PreInvocationLike): void {
  if (installedEarly || !tracingState().enabled) return;
  wrap(ctx);
}

function wrap(ctx: PreInvocationLike): void {
  const inv = ctx.invocationContext as InvocationContext;
  if ('functionCallback' in ctx) {
    const inner = ctx.functionCallback;
    ctx.functionCallback = (...args: unknown[]) => runRoot(inv, args[0], () => inner(...args));
  } else {
    const inner = ctx.functionHandler;
    ctx.functionHandler = (...args: unknown[]) => runRoot(inv, args[0], () => inner(...args));
  }
}

const FAAS_TRIGGER: Partial<Record<string, string>> = {
  httpTrigger: 'http',
  serviceBusTrigger: 'pubsub',
  blobTrigger: 'datasource',
  timerTrigger: 'timer',
};

function runRoot(inv: InvocationContext, trigger: unknown, fn: () => unknown): Promise<unknown> {
  const type = inv.options?.trigger?.type ?? '';
  const http = type === 'httpTrigger';
  const attributes: Attributes = {
    'faas.trigger': FAAS_TRIGGER[type] ?? 'other',
    'faas.invocation_id': inv.invocationId,
    'faas.name': inv.functionName,
  };
  let name = inv.functionName;
  let kind: SpanKind = SpanKind.INTERNAL;
  const links: Link[] = [];
  if (http) {
    const method = (trigger as { method?: unknown } | null)?.method;
    const route = (inv.options.trigger as { route?: unknown }).route;
    const routeText = `/api/${typeof route === 'string' ? route : inv.functionName}`;
    kind = SpanKind.SERVER;
    name = typeof method === 'string' ? `${method} ${routeText}` : routeText;
    attributes['http.route'] = routeText;
    if (typeof method === 'string') attributes['http.request.method'] = method;
  } else if (type === 'serviceBusTrigger') {
    kind = SpanKind.CONSUMER;
    attributes['messaging.system'] = 'servicebus';
    attributes['messaging.operation.type'] = 'process';
    const tm = inv.triggerMetadata ?? {};
    const count = Number(tm['deliveryCount']);
    if (Number.isFinite(count)) attributes['messaging.servicebus.message.delivery_count'] = count;
    // the producers' traces: linked, so the async scoring can be followed from each producer (a delivery
    // batch, cardinality many, carries one set of application properties per message)
    const many = tm['applicationPropertiesArray'];
    if (Array.isArray(many)) attributes['messaging.batch.message_count'] = many.length;
    const all = (Array.isArray(many) ? many : [tm['applicationProperties']]) as (Record<string, unknown> | undefined)[];
    for (const props of all) {
      const producer = trace.getSpanContext(contextFromTraceparent(props?.['traceparent'] ?? props?.['Diagnostic-Id']));
      if (producer !== undefined) links.push({ context: producer });
    }
  }
  const parent = contextFromTraceparent(inv.traceContext?.traceParent, inv.traceContext?.traceState);
  tracer ??= otelTracer();
  return tracer.startActiveSpan(name, { kind, attributes, links }, parent, (span) => {
    const failed = (err: unknown): never => {
      span.setAttribute('error.type', errorType(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorType(err) });
      span.end();
      throw err;
    };
    let result: unknown;
    try {
      result = fn();
    } catch (err) {
      return Promise.reject(err as Error).catch(failed);
    }
    // one `then` rather than an async wrapper: promises cost more while async context tracking is on
    return Promise.resolve(result).then((value) => {
      if (http) {
        const status = (value as { status?: unknown } | null)?.status;
        const code = typeof status === 'number' ? status : 200;
        span.setAttribute('http.response.status_code', code);
        if (code >= 500) {
          span.setAttribute('error.type', String(code));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      span.end();
      return value;
    }, failed);
  });
}

/** The tracer of invocation root spans, looked up once (tracing is on by the first invocation it wraps). */
let tracer: Tracer | undefined;
