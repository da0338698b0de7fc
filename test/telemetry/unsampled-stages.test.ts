/**
 * An unsampled trace starts no stage span: the stage tracer runs the stage directly under a non-recording
 * parent (no sampler decision, no span object, no active-context switch), and a sampled trace gets them all.
 * Its own file: it registers a global tracer provider and context manager for its process.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { stageTracer } from '../../lib/telemetry/tracing';

describe('stage spans and sampling', () => {
  it('stage spans are made only under a recorded parent: an unsampled trace starts none', async () => {
    const exporter = new InMemorySpanExporter();
    const decided: string[] = [];
    const parentBased = new ParentBasedSampler({ root: new AlwaysOnSampler() });
    const sampler: Sampler = {
      shouldSample: (...args) => (decided.push(args[2]), parentBased.shouldSample(...args)),
      toString: () => 'counting',
    };
    const provider = new NodeTracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register(); // the async context manager, as startTracing does (this file's process only)
    const otel = provider.getTracer('t');
    const stages = stageTracer(otel);
    const underCaller = (flags: TraceFlags): Promise<boolean[]> => {
      const caller = trace.setSpanContext(ROOT_CONTEXT, {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: flags,
        isRemote: true,
      });
      return otel.startActiveSpan('root', {}, caller, async (root) => {
        const recorded = [
          stages.spanSync('validate', {}, (s) => s.recording),
          await stages.span('context', {}, (s) => Promise.resolve(s.recording)),
        ];
        root.end();
        return recorded;
      });
    };
    assert.deepEqual(await underCaller(TraceFlags.NONE), [false, false]);
    assert.deepEqual(decided, ['root'], 'unsampled: no stage span is even started');
    assert.equal(exporter.getFinishedSpans().length, 0);
    assert.deepEqual(await underCaller(TraceFlags.SAMPLED), [true, true]);
    assert.deepEqual(
      exporter.getFinishedSpans().map((s) => s.name),
      ['validate', 'context', 'root'],
    );
  });
});
