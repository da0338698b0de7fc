/**
 * The pieces that keep per-request telemetry cheap: the bounded memo of user-id hashes, the summed counters
 * (one Map lookup per add, exported as a monotonic sum), synchronous stage spans, and the stage span's
 * `recording` flag that lets a stage skip its attributes when the trace is not sampled.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AggregationTemporality, DataPointType, MeterProvider, type SumMetricData } from '@opentelemetry/sdk-metrics';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  ParentBasedSampler,
  type Sampler,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { AppError } from '../../lib/errors/errors';
import type { InferenceBackend } from '../../lib/inference/backend';
import type { Lease } from '../../lib/inference/version-leases';
import { Telemetry } from '../../lib/telemetry/telemetry';
import { tracedRouter } from '../../lib/telemetry/traced-components';
import { BoundedMemo } from '../../lib/telemetry/bounded-memo';
import { SummedCounter } from '../../lib/telemetry/summed-counter';
import { stageTracer } from '../../lib/telemetry/tracing';
import { TestReader } from './support';

describe('cheap per-request recording', () => {
  it('BoundedMemo computes a key once while it is remembered, and forgets the oldest beyond max', () => {
    const computed: string[] = [];
    const memo = new BoundedMemo(2, (k) => (computed.push(k), k.toUpperCase()));
    assert.equal(memo.get('a'), 'A');
    assert.equal(memo.get('a'), 'A');
    assert.equal(memo.get('b'), 'B');
    assert.equal(memo.get('c'), 'C'); // forgets a
    assert.equal(memo.size, 2);
    assert.equal(memo.get('b'), 'B');
    assert.equal(memo.get('a'), 'A');
    assert.deepEqual(computed, ['a', 'b', 'c', 'a']);
    assert.throws(() => new BoundedMemo(Number.NaN, String), /max must be a number >= 1/);
  });

  it('SummedCounter sums per key and is exported as a monotonic sum with the first attributes', async () => {
    const reader = new TestReader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('t');
    const c = new SummedCounter(meter, 'x.count', { description: 'd' });
    let built = 0;
    const attrs = (tier: string) => () => (built++, { tier });
    c.add('l1', 1, attrs('l1'));
    c.add('l1', 2, attrs('l1'));
    c.add('l2', 1, attrs('l2'));
    const { resourceMetrics } = await reader.collect();
    const m = resourceMetrics.scopeMetrics[0]?.metrics[0] as SumMetricData;
    assert.equal(m.descriptor.name, 'x.count');
    assert.equal(m.dataPointType, DataPointType.SUM);
    assert.equal(m.isMonotonic, true);
    assert.equal(m.aggregationTemporality, AggregationTemporality.CUMULATIVE);
    assert.deepEqual(
      m.dataPoints.map((p) => [p.attributes['tier'], p.value]),
      [
        ['l1', 3],
        ['l2', 1],
      ],
    );
    assert.equal(built, 2, 'attributes are built once per series');
  });

  it('spanSync ends its span when the stage returns, and marks it failed when the stage throws', () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = stageTracer(provider.getTracer('t'));
    assert.equal(
      tracer.spanSync('validate', { n: 1 }, (span) => (span.setAttributes({ rejected: 0 }), 42)),
      42,
    );
    assert.throws(() =>
      tracer.spanSync('validate', {}, () => {
        throw new AppError('validation_failed', 'x');
      }),
    );
    const [ok, failed] = exporter.getFinishedSpans();
    assert.deepEqual(ok?.attributes, { n: 1, rejected: 0 });
    assert.equal(failed?.attributes['error.type'], 'validation_failed');
    assert.equal(failed?.status.message, 'validation_failed');
  });

  it("a stage span says whether it records, so an unsampled trace's stage skips its attributes", async () => {
    const on = stageTracer(new BasicTracerProvider().getTracer('t'));
    const off = stageTracer(new BasicTracerProvider({ sampler: new AlwaysOffSampler() }).getTracer('t'));
    assert.equal(await on.span('context', {}, (s) => Promise.resolve(s.recording)), true);
    assert.equal(await off.span('context', {}, (s) => Promise.resolve(s.recording)), false);
    assert.equal(
      off.spanSync('validate', {}, (s) => s.recording),
      false,
    );
  });

  it('inference spans are made only under a recorded parent: an unsampled trace gets none', async () => {
    const exporter = new InMemorySpanExporter();
    const decided: string[] = []; // spans the SDK was asked to sample: each is span work, recorded or not
    const parentBased = new ParentBasedSampler({ root: new AlwaysOnSampler() });
    const sampler: Sampler = {
      shouldSample: (...args) => (decided.push(args[2]), parentBased.shouldSample(...args)),
      toString: () => 'counting',
    };
    const provider = new NodeTracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register(); // the global tracer and an async context manager, as startTracing does
    const t = await Telemetry.create({ tracerProvider: provider });
    const backend = {
      info: { executionProviders: ['cpu'] },
      run: () =>
        Promise.resolve({ scores: Float32Array.of(0.1), timing: { queueMs: 1, inferenceMs: 2, batchSize: 4 } }),
    } as unknown as InferenceBackend;
    const lease = { manifest: { name: 'fraud', version: '1.0.0' }, backend, release: () => undefined } as Lease;
    const router = tracedRouter({ acquire: () => lease, shadow: () => undefined }, t);
    const underCaller = (flags: TraceFlags) => {
      const caller = trace.setSpanContext(ROOT_CONTEXT, {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: flags,
        isRemote: true,
      });
      return context.with(caller, () =>
        provider.getTracer('t').startActiveSpan('root', (root) =>
          router
            .acquire('u')
            .backend.run(new Float32Array(17), 1)
            .finally(() => root.end()),
        ),
      );
    };
    await underCaller(TraceFlags.NONE);
    assert.deepEqual(decided, ['root'], 'unsampled: no inference span is even started');
    assert.equal(exporter.getFinishedSpans().length, 0);
    await underCaller(TraceFlags.SAMPLED);
    assert.deepEqual(
      exporter.getFinishedSpans().map((s) => s.name),
      ['inference.queue', 'inference.run', 'root'],
    );
    assert.equal(exporter.getFinishedSpans()[1]?.attributes['batch.size'], 4);
    await provider.shutdown();
  });
});
