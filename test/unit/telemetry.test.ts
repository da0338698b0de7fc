import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createEngine } from '../../lib/app';
import { testConfig } from '../support/config';
import { AppError } from '../../lib/errors/errors';
import { silentLogger } from '../../lib/platform/logger';
import { validEvent } from '../support/events';
import { combineHandlers } from '../../lib/platform/combine-handlers';
import { Telemetry } from '../../lib/telemetry/telemetry';
import { tracedRouter } from '../../lib/telemetry/traced-components';

class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function points(reader: TestReader, name: string): Promise<DataPoint<unknown>[]> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []) as DataPoint<unknown>[];
}

async function setup(): Promise<{ t: Telemetry; reader: TestReader; spans: InMemorySpanExporter }> {
  const reader = new TestReader();
  const spans = new InMemorySpanExporter();
  const t = await Telemetry.create({
    meterProvider: new MeterProvider({ readers: [reader] }),
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
  });
  return { t, reader, spans };
}

describe('telemetry', () => {
  it('turns scoring results into counters by path, decision and cache, without payment data', async () => {
    const { t, reader } = await setup();
    t.scored({ path: 'http', decision: 'approve', cache: 'hit', modelVersion: '1.0.0', score: 0.1 });
    t.scored({ path: 'http', decision: 'approve', cache: 'hit', modelVersion: '1.0.0', score: 0.2 });
    t.scored({ path: 'queue', decision: 'decline', cache: 'degraded', modelVersion: '1.0.0', score: 0.9 });
    const reqs = await points(reader, 'scoring.requests');
    const http = reqs.find((p) => p.attributes['path'] === 'http');
    assert.equal(http?.value, 2);
    assert.equal(http?.attributes['cache'], 'hit');
    assert.equal(reqs.find((p) => p.attributes['path'] === 'queue')?.value, 1);
    const hist = (await points(reader, 'scoring.score'))[0]?.value as Histogram;
    assert.equal(hist.count, 3);
    assert.ok(Math.abs((hist.sum ?? 0) - 1.2) < 1e-9);
  });

  it('turns batcher, pool, context and session events into metrics', async () => {
    const { t, reader } = await setup();
    const b = t.batcherEvents();
    b.batchFinished?.({ rows: 12, requests: 10, ms: 3, ok: true });
    b.batchFinished?.({ rows: 4, requests: 4, ms: 9, ok: false, code: 'inference_failed' });
    b.shed?.({ reason: 'queue_full', rows: 1, queuedRows: 2048 });
    b.expired?.({ rows: 3, lateMs: 2 });
    t.poolEvents().workerExit?.({ workerId: 1, exitCode: 1, failedRuns: 2, reason: 'crash' });
    t.contextEvents().degraded?.({ reason: 'timeout' });
    t.sessionEvents().loaded?.({ name: 'fraud', version: '1.1.0', executionProviders: ['cpu'], loadMs: 40 });
    t.sessionEvents().loadFailed?.({ reason: 'bad' });
    const rows = await points(reader, 'inference.batch.rows');
    assert.equal((rows.find((p) => p.attributes['ok'] === true)?.value as Histogram).sum, 12);
    assert.equal((await points(reader, 'scoring.shed'))[0]?.attributes['reason'], 'queue_full');
    assert.equal((await points(reader, 'inference.expired'))[0]?.value, 3);
    assert.equal((await points(reader, 'inference.worker.exits'))[0]?.value, 1);
    assert.equal((await points(reader, 'context.degraded'))[0]?.attributes['reason'], 'timeout');
    const loads = await points(reader, 'model.loads');
    assert.deepEqual(loads.map((p) => p.attributes['outcome']).sort(), ['failed', 'loaded']);
  });

  it('records spans, with the error code on failure', async () => {
    const { t, spans } = await setup();
    assert.equal(await t.span('score', { path: 'http' }, async () => 42), 42);
    await assert.rejects(t.span('score', { path: 'http' }, () => Promise.reject(new AppError('overloaded', 'x'))));
    const done = spans.getFinishedSpans();
    assert.equal(done.length, 2);
    assert.equal(done[1]?.status.message, 'overloaded');
  });

  it('is a no-op without tracing set up or providers', async () => {
    const t = await Telemetry.create();
    t.scored({ path: 'http', decision: 'approve', cache: 'miss', modelVersion: '1', score: 0 });
    assert.equal(t.tracer.enabled, false, 'tracing is off: the no-op tracer');
    // off costs nothing: the decorators hand back the component itself
    const router = { acquire: () => assert.fail('not called'), shadow: () => undefined };
    assert.equal(tracedRouter(router, t), router);
    await t.dispose();
  });

  it('counts cache lookups per tier, sheds, swaps, escalations and breaker transitions', async () => {
    const { t, reader } = await setup();
    t.cacheLookup('hit', 'l1');
    t.cacheLookup('hit', 'l2');
    t.cacheLookup('miss', undefined);
    t.cacheLookup('degraded', undefined);
    const hits = await points(reader, 'scoring.cache.hits');
    assert.deepEqual(hits.map((p) => [p.attributes['tier'], p.value]).sort(), [
      ['l1', 1],
      ['l2', 1],
    ]);
    const misses = await points(reader, 'scoring.cache.misses');
    assert.equal(misses.find((p) => p.attributes['tier'] === 'l1')?.value, 3);
    assert.equal(
      misses.filter((p) => p.attributes['tier'] === 'l2').reduce((n, p) => n + (p.value as number), 0),
      2,
    );
    const s = t.sessionEvents();
    s.loaded?.({ name: 'fraud', version: '1.0.0', executionProviders: ['cpu'], loadMs: 1 });
    s.loaded?.({ name: 'fraud', version: '1.1.0', executionProviders: ['cpu'], loadMs: 1 });
    const swaps = await points(reader, 'scoring.model.swaps');
    assert.deepEqual(
      [swaps[0]?.attributes['from'], swaps[0]?.attributes['to'], swaps[0]?.value],
      ['1.0.0', '1.1.0', 1],
    );
    const served = await points(reader, 'scoring.model.served');
    assert.deepEqual(
      served.map((p) => p.attributes['model.version']),
      ['1.1.0'],
    );
    const e = t.escalationEvents();
    const call = { triggers: ['requested'] as const, promptTokens: 0, completionTokens: 0, costUsd: 0, model: 'm' };
    e.escalated?.({ ...call, outcome: 'ok', latencyMs: 120, promptTokens: 200, completionTokens: 40, costUsd: 0.001 });
    e.escalated?.({ ...call, outcome: 'breaker_open', latencyMs: 0 });
    e.breakerStateChanged?.({ previous: 'closed', state: 'open' });
    assert.equal((await points(reader, 'scoring.escalations')).length, 2);
    assert.equal((await points(reader, 'scoring.breaker.open'))[0]?.value, 1);
    assert.equal((await points(reader, 'scoring.breaker.transitions'))[0]?.attributes['to'], 'open');
    const ext = await points(reader, 'scoring.external.duration');
    assert.deepEqual(
      ext.map((p) => p.attributes['dependency']),
      ['openai'],
      'only a made call is an external call',
    );
    const tokens = await points(reader, 'scoring.escalation.tokens');
    assert.deepEqual(tokens.map((p) => [p.attributes['kind'], p.value]).sort(), [
      ['completion', 40],
      ['prompt', 200],
    ]);
  });

  it('is wired by the composition root: model loads and scored payments reach the metrics', async () => {
    const { t, reader } = await setup();
    const engine = await createEngine(testConfig({}), { telemetry: t, logger: silentLogger });
    try {
      await engine.start();
      await engine.score(validEvent());
      await engine.scoreBatch({ events: [validEvent({ transactionId: 'b1' }), validEvent({ transactionId: 'b2' })] });
      const reqs = await points(reader, 'scoring.requests');
      assert.equal(reqs.find((p) => p.attributes['path'] === 'http')?.value, 1);
      assert.equal(reqs.find((p) => p.attributes['path'] === 'batch')?.value, 2);
      assert.equal((await points(reader, 'model.loads'))[0]?.attributes['outcome'], 'loaded');
      assert.ok(((await points(reader, 'inference.batch.rows'))[0]?.value as Histogram).count >= 2);
    } finally {
      await engine.dispose();
    }
  });

  it('combines handlers so each receives the event', () => {
    const seen: string[] = [];
    const h = combineHandlers<{ a(x: number): void; b(): void }>({ a: (x) => seen.push(`1:${x}`) }, undefined, {
      a: (x) => seen.push(`2:${x}`),
      b: () => seen.push('b'),
    });
    h.a?.(7);
    h.b?.();
    assert.deepEqual(seen, ['1:7', '2:7', 'b']);
  });
});
