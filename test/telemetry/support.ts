import { MetricReader, type DataPoint, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { eventually } from '../support/eventually';

/** A metric reader collected on demand. */
export class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Every metric the reader has, by name: unit and data points. */
export async function collectMetrics(
  reader: TestReader,
): Promise<Map<string, { unit: string; points: DataPoint<unknown>[] }>> {
  const { resourceMetrics } = await reader.collect();
  return metricMap(resourceMetrics);
}

function metricMap(rm: ResourceMetrics): Map<string, { unit: string; points: DataPoint<unknown>[] }> {
  const out = new Map<string, { unit: string; points: DataPoint<unknown>[] }>();
  for (const m of rm.scopeMetrics.flatMap((s) => s.metrics))
    out.set(m.descriptor.name, { unit: m.descriptor.unit, points: m.dataPoints as DataPoint<unknown>[] });
  return out;
}

/** A W3C traceparent with fresh random ids. */
export function newTraceparent(): { traceparent: string; traceId: string; spanId: string } {
  const hex = (n: number): string =>
    [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

/** The spans of one trace. */
export function spansOf(spans: readonly ReadableSpan[], traceId: string): ReadableSpan[] {
  return spans.filter((s) => s.spanContext().traceId === traceId);
}

/** The one span named `name`. @throws if there is not exactly one. */
export function one(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  if (found.length !== 1)
    throw new Error(`expected one "${name}" span, got ${found.length}: ${spans.map((s) => s.name).join(', ')}`);
  return found[0] as ReadableSpan;
}

/** Polls `check` every 10 ms until it returns a value, at most `timeoutMs`. @throws naming `what` on timeout. */
export async function waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 5000): Promise<T> {
  return (await eventually(
    () => Promise.resolve(check()),
    (v) => v !== undefined,
    what,
    timeoutMs,
    10,
  )) as T;
}
