import { SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { ExportResultCode, hrTimeToMilliseconds, hrTimeToTimeStamp, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** One finished span as `OTEL_TRACES_EXPORTER=console` prints it (one JSON object per line). */
export interface JsonSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** The parent's span id; absent on a trace's first span. */
  readonly parentSpanId?: string;
  readonly name: string;
  /** `INTERNAL`, `SERVER`, `CLIENT`, `PRODUCER` or `CONSUMER`. */
  readonly kind: string;
  /** ISO 8601 with nanoseconds. */
  readonly startTime: string;
  readonly durationMs: number;
  readonly attributes: Attributes;
  readonly status: { readonly code: 'UNSET' | 'OK' | 'ERROR'; readonly message?: string };
  /** Linked spans (e.g. the Service Bus producer's). */
  readonly links?: readonly { readonly traceId: string; readonly spanId: string }[];
}

/** The JSON form of a finished span. */
export function toJsonSpan(s: ReadableSpan): JsonSpan {
  const ctx = s.spanContext();
  const parent = s.parentSpanContext?.spanId;
  return {
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    ...(parent === undefined ? {} : { parentSpanId: parent }),
    name: s.name,
    kind: SpanKind[s.kind],
    startTime: hrTimeToTimeStamp(s.startTime),
    durationMs: Math.round(hrTimeToMilliseconds(s.duration) * 1000) / 1000,
    attributes: s.attributes,
    status: {
      code: SpanStatusCode[s.status.code] as 'UNSET' | 'OK' | 'ERROR',
      ...(s.status.message === undefined ? {} : { message: s.status.message }),
    },
    ...(s.links.length === 0
      ? {}
      : { links: s.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })) }),
  };
}

/** Writes each finished span to a line sink (default stdout) as one JSON object per line, for `jq`. */
export class JsonLinesSpanExporter implements SpanExporter {
  constructor(private readonly write: (text: string) => void = (t) => void process.stdout.write(t)) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      this.write(spans.map((s) => `${JSON.stringify(toJsonSpan(s))}\n`).join(''));
      done({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Accepts spans and drops them (the benchmark's tracing-on arm: full span cost, no I/O). */
export class DiscardingSpanExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.exported += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
