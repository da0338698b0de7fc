/**
 * Process-wide tracing setup, started once, before the instrumented modules load (see `preload.ts`):
 * - `APPLICATIONINSIGHTS_CONNECTION_STRING` set: `applicationinsights` v3 (`useAzureMonitor`) owns the global
 *   providers (traces, metrics, logs, http and Azure SDK instrumentation); `OTEL_TRACES_EXPORTER=console`
 *   additionally prints spans;
 * - else `OTEL_TRACES_EXPORTER=console` (JSON lines on stdout) or `otlp` (OTLP/HTTP to
 *   `OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces`): a Node tracer provider with that exporter;
 * - else tracing is off: no provider, {@link stageTracer} is the no-op one.
 */
import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { Sampler, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TelemetrySettings } from '../config/telemetry-settings';
import { KeyedHash, type KeyedHashForm } from '../platform/keyed-hash';
import {
  NOOP_SPAN,
  noopTracer,
  type SpanAttributes,
  type StageName,
  type StageSpan,
  type StageTracer,
} from '../platform/stage-tracer';

/** The tracer's instrumentation scope name. */
export const TRACER_NAME = 'onnx-scoring';

/** Test and benchmark seams of {@link startTracing}. */
export interface TracingOverrides {
  /** Export here instead of what the settings name (tests: an in-memory exporter; bench: a discarding one). */
  readonly exporter?: SpanExporter;
  /** `simple` exports each span when it ends (tests); `batch` (default) buffers like production. */
  readonly processor?: 'simple' | 'batch';
  /**
   * The sampler of the local tracer provider; default the SDK's (parent-based, always on for new traces).
   * The benchmark passes the Azure Monitor distro's default (5 traces/s) to measure tracing as deployed.
   */
  readonly sampler?: Sampler;
}

/** What {@link startTracing} set up. */
export interface TracingState {
  readonly enabled: boolean;
  /** `azure-monitor`, `console`, `otlp`, `custom` (overrides) or `off`. */
  readonly mode: 'azure-monitor' | 'console' | 'otlp' | 'custom' | 'off';
  /** Exports buffered spans now. */
  flush(): Promise<void>;
  /** Flushes and stops export. */
  shutdown(): Promise<void>;
}

const OFF: TracingState = { enabled: false, mode: 'off', flush: async () => {}, shutdown: async () => {} };
let state: TracingState | undefined;
/** `user.id` of a span: 32 hex digits of the keyed hash, no prefix. */
const USER_HASH: KeyedHashForm = { prefix: '', hexDigits: 32 };

/**
 * Starts tracing once per process; later calls return the first call's state (the preload runs first in
 * production; a test or benchmark that calls this before loading the app wins over the preload).
 */
export function startTracing(settings: TelemetrySettings, overrides: TracingOverrides = {}): TracingState {
  if (state !== undefined) return state;
  if (settings.userIdKey !== undefined) userHashes = new KeyedHash(settings.userIdKey, 4096, USER_HASH);
  const exporting =
    overrides.exporter !== undefined || settings.tracesExporter === 'console' || settings.tracesExporter === 'otlp';
  // Off: nothing of the tracing SDK is loaded (it costs start-up time); the API's no-op tracer serves.
  if (!exporting && settings.appInsightsConnectionString === undefined) return (state = OFF);
  const sdk = tracingSdk();
  const processor = (e: SpanExporter): SpanProcessor =>
    overrides.processor === 'simple'
      ? new sdk.base.SimpleSpanProcessor(e)
      : new sdk.base.BatchSpanProcessor(e, { scheduledDelayMillis: 200 });
  const extra: SpanProcessor[] = [];
  if (overrides.exporter !== undefined) extra.push(processor(overrides.exporter));
  else if (settings.tracesExporter === 'console') extra.push(processor(new sdk.JsonLinesSpanExporter()));
  else if (settings.tracesExporter === 'otlp') extra.push(processor(otlpExporter(settings.otlpEndpoint)));
  const resource = (): Resource => sdk.resourceFromAttributes({ [sdk.ATTR_SERVICE_NAME]: settings.serviceName });

  if (settings.appInsightsConnectionString !== undefined && overrides.exporter === undefined) {
    // Loaded only here: the distro patches http, the Azure SDK and redis clients as they are required next.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ai = require('applicationinsights') as typeof import('applicationinsights');
    ai.useAzureMonitor({
      azureMonitorExporterOptions: { connectionString: settings.appInsightsConnectionString },
      resource: resource(),
      spanProcessors: extra,
    });
    state = {
      enabled: true,
      mode: 'azure-monitor',
      flush: async () => {
        await Promise.all(extra.map((p) => p.forceFlush())); // local exporters first: they never wait on the network
        await ai.flushAzureMonitor();
      },
      shutdown: () => ai.shutdownAzureMonitor(),
    };
    return state;
  }
  if (extra.length === 0) return (state = OFF);
  const provider = new sdk.NodeTracerProvider({
    resource: resource(),
    spanProcessors: extra,
    ...(overrides.sampler !== undefined ? { sampler: overrides.sampler } : {}),
  });
  provider.register(); // global provider, AsyncLocalStorage context, W3C trace-context propagation
  const mode = overrides.exporter !== undefined ? 'custom' : settings.tracesExporter === 'otlp' ? 'otlp' : 'console';
  state = { enabled: true, mode, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
  return state;
}

/** The tracing SDK, loaded on the first {@link startTracing} that exports (never when tracing is off). */
function tracingSdk() {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const base = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { NodeTracerProvider } =
    require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { ATTR_SERVICE_NAME } =
    require('@opentelemetry/semantic-conventions') as typeof import('@opentelemetry/semantic-conventions');
  const { JsonLinesSpanExporter } = require('./json-span-exporter') as typeof import('./json-span-exporter');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return { base, NodeTracerProvider, resourceFromAttributes, ATTR_SERVICE_NAME, JsonLinesSpanExporter };
}

function otlpExporter(endpoint: string): SpanExporter {
  type Otlp = typeof import('@opentelemetry/exporter-trace-otlp-http');
  // loaded only when chosen: it pulls in the OTLP transformer and HTTP stack
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as Otlp;
  return new OTLPTraceExporter({ url: `${endpoint}/v1/traces` });
}

/** The state of this process's tracing (off until {@link startTracing} ran). */
export function tracingState(): TracingState {
  return state ?? OFF;
}

/** The hashes of the last 4096 distinct user ids: a returning user costs a lookup, not an HMAC (~5 µs). */
let userHashes = new KeyedHash(randomBytes(32), 4096, USER_HASH);

/** `user.id` as a keyed hash (HMAC-SHA256, first 16 bytes hex) under `TELEMETRY_USER_ID_KEY`; never the raw id. */
export function hashUserId(userId: string): string {
  return userHashes.of(userId);
}

/** The OpenTelemetry tracer of this service (the global provider's). */
export function otelTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

const KINDS: Partial<Record<string, SpanKind>> = { publish: SpanKind.PRODUCER, escalation: SpanKind.CLIENT };

/** The error code recorded on a failed span (`AppError.code`, else the error's name). */
export function errorType(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'error';
}

/** Marks `span` failed: status ERROR and `error.type` = the error's code. */
function fail(span: Span, err: unknown): void {
  const type = errorType(err);
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

/**
 * Stage spans on an OpenTelemetry tracer. Attributes go to the SDK as given: it copies them and drops
 * `undefined` values itself (`Span.setAttribute`), so no cleaned copy is built per span.
 */
class OtelStageTracer implements StageTracer {
  readonly enabled = true;
  constructor(private readonly tracer: Tracer) {}

  span<T>(name: StageName, attrs: SpanAttributes, fn: (span: StageSpan) => Promise<T>): Promise<T> {
    if (unsampledParent()) return fn(NOOP_SPAN); // no span, no context switch, no promise of ours
    const kind = KINDS[name] ?? SpanKind.INTERNAL;
    // one `then` instead of an async wrapper: every promise costs more once async context tracking is on
    return this.tracer.startActiveSpan(name, { kind, attributes: attrs }, (span) => {
      let result: Promise<T>;
      try {
        result = fn(stageSpan(span));
      } catch (err) {
        fail(span, err);
        span.end();
        return Promise.reject(err as Error);
      }
      return result.then(
        (value) => (span.end(), value),
        (err: unknown) => {
          fail(span, err);
          span.end();
          throw err;
        },
      );
    });
  }

  spanSync<T>(name: StageName, attrs: SpanAttributes, fn: (span: StageSpan) => T): T {
    if (unsampledParent()) return fn(NOOP_SPAN);
    const span = this.tracer.startSpan(name, { kind: KINDS[name] ?? SpanKind.INTERNAL, attributes: attrs });
    try {
      return fn(stageSpan(span));
    } catch (err) {
      fail(span, err);
      throw err;
    } finally {
      span.end();
    }
  }
}

/**
 * Whether the active span exists and is not recorded (its trace was not sampled). Its children would be
 * non-recording too, and in an unsampled trace a stage span only costs (the sampler's decision, a span
 * object, an active-context switch): so an unsampled trace gets none. What propagates downstream (a
 * published message's `traceparent`) is then the root's span context, still with the unsampled flag.
 */
function unsampledParent(): boolean {
  const parent = trace.getActiveSpan();
  return parent !== undefined && !parent.isRecording();
}

function stageSpan(span: Span): StageSpan {
  return { recording: span.isRecording(), setAttributes: (a) => void span.setAttributes(a) };
}

/** The stage tracer: OpenTelemetry-backed when tracing is on (or a provider is given), else the no-op one. */
export function stageTracer(tracer?: Tracer): StageTracer {
  if (tracer !== undefined) return new OtelStageTracer(tracer);
  return tracingState().enabled ? new OtelStageTracer(otelTracer()) : noopTracer;
}
