import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { loadTelemetrySettings } from '../../lib/config/telemetry-settings';
import { AppError } from '../../lib/errors/errors';
import { contextFromTraceparent } from '../../lib/telemetry/invocation-tracing';
import { JsonLinesSpanExporter } from '../../lib/telemetry/json-span-exporter';
import { hashUserId, stageTracer } from '../../lib/telemetry/tracing';
import { invocationTraceContext, isTraceparent } from '../../local/trace-context';

describe('console exporter, trace context, settings', () => {
  it('prints one JSON object per finished span, with ids, kind, times, attributes and status', async () => {
    const lines: string[] = [];
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(new JsonLinesSpanExporter((t) => lines.push(t)))],
    });
    const tracer = stageTracer(provider.getTracer('t'));
    const parent = contextFromTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    await assert.rejects(
      provider
        .getTracer('t')
        .startActiveSpan('root', { kind: SpanKind.SERVER }, parent, (root) =>
          tracer
            .span('context', { 'cache.hit': true, skipped: undefined }, () =>
              Promise.reject(new AppError('overloaded', 'x')),
            )
            .finally(() => root.end()),
        ),
    );
    const text = lines.join('');
    assert.ok(text.endsWith('\n'));
    const spans = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      spans.map((s) => s['name']),
      ['context', 'root'],
    );
    const [child, root] = spans as [Record<string, unknown>, Record<string, unknown>];
    assert.equal(root['traceId'], '0af7651916cd43dd8448eb211c80319c');
    assert.equal(root['parentSpanId'], 'b7ad6b7169203331');
    assert.equal(root['kind'], 'SERVER');
    assert.deepEqual(child['attributes'], { 'cache.hit': true, 'error.type': 'overloaded' });
    assert.deepEqual(child['status'], { code: 'ERROR', message: 'overloaded' });
    assert.equal(typeof child['durationMs'], 'number');
    assert.match(String(child['startTime']), /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(root['status'], { code: 'UNSET' }, 'a span whose status nobody set');
    assert.equal('links' in root, false, 'no links field on a span without links');
  });

  it('prints an OK status and the ids of linked spans', () => {
    const lines: string[] = [];
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(new JsonLinesSpanExporter((t) => lines.push(t)))],
    });
    const linked = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
    const span = provider
      .getTracer('t')
      .startSpan('consume', { kind: SpanKind.CONSUMER, links: [{ context: linked }] });
    span.setStatus({ code: SpanStatusCode.OK });
    span.end();
    const printed = JSON.parse(lines.join('')) as Record<string, unknown>;
    assert.equal(printed['kind'], 'CONSUMER');
    assert.deepEqual(printed['status'], { code: 'OK' });
    assert.deepEqual(printed['links'], [{ traceId: linked.traceId, spanId: linked.spanId }]);
    assert.equal('parentSpanId' in printed, false, "a trace's first span has no parent id");
  });

  it('reads a traceparent, or starts a new sampled trace when there is none or it is malformed', () => {
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    assert.deepEqual(invocationTraceContext(tp, 'k=v'), { traceParent: tp, traceState: 'k=v', attributes: {} });
    for (const bad of [undefined, '', 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01']) {
      const fresh = invocationTraceContext(bad);
      assert.ok(isTraceparent(fresh.traceParent), String(fresh.traceParent));
      assert.notEqual(fresh.traceParent, tp);
    }
    // new traces draw their ids from a refilled random pool: across several refills, every one is valid and distinct
    const fresh = Array.from({ length: 1000 }, () => String(invocationTraceContext(undefined).traceParent));
    assert.ok(fresh.every((t) => isTraceparent(t)));
    assert.equal(new Set(fresh.map((t) => t.slice(3, 35))).size, 1000, 'distinct trace ids');
    assert.equal(new Set(fresh.map((t) => t.slice(36, 52))).size, 1000, 'distinct span ids');
    assert.equal(trace.getSpanContext(contextFromTraceparent('nonsense')), undefined);
    assert.equal(trace.getSpanContext(contextFromTraceparent(tp))?.spanId, '00f067aa0ba902b7');
  });

  it('hashes user ids with a key, never returning the id', () => {
    const h = hashUserId('user-42');
    assert.match(h, /^[0-9a-f]{32}$/);
    assert.ok(!h.includes('user-42'));
    assert.equal(hashUserId('user-42'), h);
    assert.notEqual(hashUserId('user-43'), h);
  });

  it('parses the OpenTelemetry settings, naming a bad one', () => {
    const s = loadTelemetrySettings({ OTEL_TRACES_EXPORTER: 'CONSOLE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' });
    assert.equal(s.tracesExporter, 'console');
    assert.equal(s.otlpEndpoint, 'http://c:4318');
    assert.equal(loadTelemetrySettings({}).tracesExporter, 'none');
    assert.throws(
      () => loadTelemetrySettings({ OTEL_TRACES_EXPORTER: 'zipkin', TELEMETRY_USER_ID_KEY: 'short' }),
      (e: AppError) =>
        e.code === 'config_invalid' &&
        (e.errors ?? []).map((x) => x.path).join() === 'OTEL_TRACES_EXPORTER,TELEMETRY_USER_ID_KEY',
    );
  });
});
