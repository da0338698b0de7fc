/**
 * End to end through the local host and the real @azure/functions library, with an in-memory span exporter
 * and metric reader: the span tree of an HTTP request, a Service Bus message and a model upload; metric
 * units; and that no payment field, note or raw user id reaches a span, a metric or a log line.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { loadTelemetrySettings } from '../../lib/config/telemetry-settings';
import { startTracing } from '../../lib/telemetry/tracing';
import { configureSharedEngine } from '../../lib/app';
import { createJsonLogger } from '../../lib/platform/logger';
import { Telemetry } from '../../lib/telemetry/telemetry';
import type { LocalHost } from '../../local/host';
import { InProcessBus } from '../../local/in-process-bus';
import { ServiceBusEmulator } from '../../local/service-bus-emulator';
import { validEvent } from '../support/events';
import { http } from '../support/http';
import { startHost } from '../support/local-host';
import { testRedis } from '../support/redis';
import { bundledBytes, copyBundled, writeFolderModel } from '../model-rollout/support/models';
import { collectMetrics, newTraceparent, one, spansOf, TestReader, waitFor } from './support';
import { FEATURE_COUNT } from '../../lib/features/featurizer';

// before anything loads the app: the preload then finds tracing started and keeps this exporter
const exporter = new InMemorySpanExporter();
startTracing(loadTelemetrySettings({}), { exporter, processor: 'simple' });

const SECRETS = {
  userId: 'usr-QUOKKA-77813',
  note: 'note-PERSIMMON-secret-5521',
  deviceId: 'dev-NARWHAL-90210',
  card: '4111111111111111',
};

describe('traces and metrics through the local host', () => {
  let host: LocalHost;
  const embeddedBus = new InProcessBus();
  let bus: ServiceBusEmulator;
  let reader: TestReader;
  const logs: string[] = [];
  const redis = testRedis();
  let models: { dir: string; remove: () => Promise<void> };

  before(async () => {
    models = await copyBundled();
    process.env['MODEL_DIR'] = models.dir;
    process.env['REDIS_URL'] = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
    process.env['REDIS_KEY_PREFIX'] = redis.prefix;
    process.env['SCORING_QUEUE'] = 'payments';
    process.env['RESULTS_TOPIC'] = 'risk-completed';
    process.env['REJECTED_QUEUE'] = 'scoring-rejected';
    process.env['MODELS_CONTAINER'] = 'models';
    process.env['REQUEST_DEADLINE_MS'] = '10000'; // a loaded test machine must not shed these requests
    process.env['REDIS_TIMEOUT_MS'] = '5000'; // nor answer them degraded
    reader = new TestReader();
    const telemetry = await Telemetry.create({ meterProvider: new MeterProvider({ readers: [reader] }) });
    configureSharedEngine({
      telemetry,
      logger: createJsonLogger('debug', (line) => logs.push(line)),
      bus: embeddedBus,
    });
    host = await startHost((line) => logs.push(line));
    bus = new ServiceBusEmulator({ bus: embeddedBus, maxConcurrentCalls: 2, log: (line) => logs.push(line) });
    bus.start(host);
    // the Redis connection is made in the background: wait (bounded) until a lookup reaches it
    const until = Date.now() + 15_000;
    for (let i = 0; ; i++) {
      const r = await http().post(
        `${host.url}/api/score`,
        JSON.stringify(validEvent({ transactionId: `warm-${i}`, userId: 'warm' })),
      );
      if (r.json['cache'] !== 'degraded') break;
      if (Date.now() > until) throw new Error('Redis never answered a context lookup');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  after(async () => {
    await bus.stop();
    await host.dispose();
    await redis.cleanup();
    await models.remove();
  });

  it('POST /api/score with a traceparent: one trace under the caller, with every stage and its attributes', async () => {
    const caller = newTraceparent();
    const r = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ transactionId: 'tr-http-1' })), {
      headers: { 'content-type': 'application/json', traceparent: caller.traceparent },
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const trace = await waitFor('the http trace', () => {
      const s = spansOf(exporter.getFinishedSpans(), caller.traceId);
      return s.some((x) => x.name === 'POST /api/score') ? s : undefined;
    });
    const root = one(trace, 'POST /api/score');
    assert.equal(root.parentSpanContext?.spanId, caller.spanId, "the root's parent is the caller's span");
    assert.equal(root.kind, SpanKind.SERVER);
    assert.equal(root.attributes['http.response.status_code'], 200);
    assert.equal(root.attributes['faas.trigger'], 'http');
    const rootId = root.spanContext().spanId;
    for (const name of ['validate', 'context', 'inference.queue', 'inference.run'])
      assert.equal(one(trace, name).parentSpanContext?.spanId, rootId, `${name} is a child of the root`);
    const context = one(trace, 'context');
    assert.equal(context.attributes['cache.hit'], false);
    assert.equal(context.attributes['cache.tier'], 'origin');
    assert.match(String(context.attributes['user.id']), /^[0-9a-f]{32}$/);
    const run = one(trace, 'inference.run');
    assert.equal(run.attributes['model.name'], 'fraud');
    assert.equal(run.attributes['model.version'], '1.0.0');
    assert.equal(run.attributes['model.provider'], 'cpu');
    assert.equal(run.attributes['batch.size'], 1);
    // the engine's Redis calls (the ruleset's list HMGETs, the context GET, the velocity script) are dependency
    // spans of the request's trace. They are issued in the same tick and leave in one auto-pipelined write, whose
    // commands ioredis traces when the write goes out: each span's parent is the operation that opened that write
    // (the root, which starts the list lookup beside the context lookup, or `context`)
    const redisSpans = trace.filter((s) => s.attributes['db.system.name'] === 'redis');
    assert.ok(redisSpans.length >= 1, `redis dependency spans: ${trace.map((s) => s.name).join(', ')}`);
    const parents = new Set([rootId, context.spanContext().spanId]);
    for (const s of redisSpans) {
      assert.equal(s.kind, SpanKind.CLIENT);
      assert.ok(parents.has(s.parentSpanContext?.spanId ?? ''), `${s.name} is a child of the root or of context`);
      assert.ok(String(s.attributes['db.operation.name']).length > 0);
    }
    const ops = new Set(redisSpans.map((s) => s.attributes['db.operation.name']));
    assert.ok(ops.has('EVALSHA') || ops.has('EVAL'), `the velocity script is traced: ${[...ops].join(', ')}`);
    // a second lookup of the same user is an L1 hit
    const caller2 = newTraceparent();
    await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ transactionId: 'tr-http-2' })), {
      headers: { 'content-type': 'application/json', traceparent: caller2.traceparent },
    });
    const ctx2 = await waitFor('the second trace', () =>
      spansOf(exporter.getFinishedSpans(), caller2.traceId).find((s) => s.name === 'context'),
    );
    assert.equal(ctx2.attributes['cache.hit'], true);
    assert.equal(ctx2.attributes['cache.tier'], 'l1');
  });

  it('without a traceparent, the host starts a new trace', async () => {
    const before = new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId));
    const r = await http().post(`${host.url}/api/score`, JSON.stringify(validEvent({ transactionId: 'tr-new-1' })));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const root = await waitFor('a new root', () =>
      exporter.getFinishedSpans().find((s) => s.name === 'POST /api/score' && !before.has(s.spanContext().traceId)),
    );
    assert.ok(root.parentSpanContext !== undefined, 'the host context is the parent');
    assert.ok(spansOf(exporter.getFinishedSpans(), root.spanContext().traceId).some((s) => s.name === 'inference.run'));
  });

  it("a Service Bus message continues the producer's trace, and the result carries the publish span's traceparent", async () => {
    const producer = newTraceparent();
    embeddedBus.send('payments', {
      messageId: 'msg-tr-1',
      body: validEvent({ transactionId: 'tr-sb-1' }),
      applicationProperties: { 'Diagnostic-Id': producer.traceparent },
    });
    const result = await waitFor('the risk-completed result', () =>
      embeddedBus.messages('risk-completed').find((m) => m.messageId === 'tr-sb-1'),
    );
    const trace = await waitFor('the queue trace', () => {
      const s = spansOf(exporter.getFinishedSpans(), producer.traceId);
      return s.some((x) => x.name === 'scoreQueue') ? s : undefined;
    });
    const root = one(trace, 'scoreQueue');
    assert.equal(root.kind, SpanKind.CONSUMER);
    assert.equal(root.parentSpanContext?.spanId, producer.spanId);
    assert.equal(root.attributes['messaging.system'], 'servicebus');
    for (const name of ['context', 'inference.queue', 'inference.run', 'publish']) one(trace, name);
    // one `validate` span per delivery batch, under the invocation root, in the producer's trace
    const validate = one(trace, 'validate');
    assert.equal(validate.parentSpanContext?.spanId, root.spanContext().spanId, 'validate is a child of the root');
    assert.equal(validate.spanContext().traceId, producer.traceId);
    assert.equal(validate.attributes['messaging.batch.message_count'], 1);
    assert.equal(validate.attributes['validate.rejected'], 0);
    const publish = one(trace, 'publish');
    assert.equal(publish.kind, SpanKind.PRODUCER);
    assert.equal(publish.attributes['messaging.destination.name'], 'risk-completed');
    assert.equal(publish.attributes['messaging.operation.type'], 'send');
    const tp = `00-${producer.traceId}-${publish.spanContext().spanId}-01`;
    assert.equal(result.applicationProperties['traceparent'], tp);
    assert.equal(result.applicationProperties['Diagnostic-Id'], tp);
  });

  it('a Service Bus message that can never be scored: the validate span counts it as rejected', async () => {
    const producer = newTraceparent();
    embeddedBus.send('payments', {
      messageId: 'msg-tr-bad',
      body: { ...validEvent({ transactionId: 'tr-sb-bad' }), amount: 'not a number' },
      applicationProperties: { traceparent: producer.traceparent },
    });
    const trace = await waitFor('the rejected message trace', () => {
      const s = spansOf(exporter.getFinishedSpans(), producer.traceId);
      return s.some((x) => x.name === 'scoreQueue') ? s : undefined;
    });
    const validate = one(trace, 'validate');
    assert.equal(validate.parentSpanContext?.spanId, one(trace, 'scoreQueue').spanContext().spanId);
    assert.equal(validate.attributes['messaging.batch.message_count'], 1);
    assert.equal(validate.attributes['validate.rejected'], 1);
    assert.ok(!trace.some((x) => x.name === 'inference.run'), 'a rejected message is not scored');
  });

  it('a model upload: model.rollout under the invocation, one child span per validation check', async () => {
    const bytes = await bundledBytes();
    await writeFolderModel(models.dir, '1.1.0', bytes, undefined);
    const caller = newTraceparent();
    await host.invoke(
      'modelBlob',
      Buffer.from(bytes),
      { BlobTrigger: 'models/fraud/1.1.0.onnx', Metadata: {} },
      { traceContext: { traceParent: caller.traceparent } },
    );
    const trace = spansOf(exporter.getFinishedSpans(), caller.traceId);
    const root = one(trace, 'modelBlob');
    assert.equal(root.parentSpanContext?.spanId, caller.spanId);
    assert.equal(root.attributes['faas.trigger'], 'datasource');
    const rollout = one(trace, 'model.rollout');
    assert.equal(rollout.parentSpanContext?.spanId, root.spanContext().spanId);
    assert.equal(rollout.attributes['model.version'], '1.1.0');
    assert.equal(rollout.attributes['rollout.outcome'], 'published');
    const checks = trace.filter((s) => s.name.startsWith('model.check.'));
    assert.deepEqual(
      checks.map((s) => s.name.slice('model.check.'.length)),
      ['sha256', 'features', 'signature', 'load', 'warmup', 'golden', 'shift'],
    );
    for (const c of checks) assert.equal(c.parentSpanContext?.spanId, rollout.spanContext().spanId);
  });

  it('an Open Inference Protocol infer: inference spans under the invocation, and the inference duration', async () => {
    const before = (await collectMetrics(reader)).get('scoring.inference.duration')?.points ?? [];
    const count = (points: typeof before): number =>
      points.reduce((n, p) => n + ((p.value as { count?: number }).count ?? 0), 0);
    const caller = newTraceparent();
    const rows = 3;
    const r = await http().post(
      `${host.url}/api/v2/models/fraud/infer`,
      JSON.stringify({
        inputs: [
          {
            name: 'features',
            shape: [rows, FEATURE_COUNT],
            datatype: 'FP32',
            data: Array.from({ length: rows * FEATURE_COUNT }, (_, i) => (i % 5) / 5),
          },
        ],
      }),
      { headers: { 'content-type': 'application/json', traceparent: caller.traceparent } },
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const trace = await waitFor('the infer trace', () => {
      const s = spansOf(exporter.getFinishedSpans(), caller.traceId);
      return s.some((x) => x.name === 'POST /api/v2/models/{name}/infer') ? s : undefined;
    });
    const root = one(trace, 'POST /api/v2/models/{name}/infer');
    assert.equal(root.parentSpanContext?.spanId, caller.spanId);
    for (const name of ['inference.queue', 'inference.run']) {
      const span = one(trace, name);
      assert.equal(span.parentSpanContext?.spanId, root.spanContext().spanId, `${name} is a child of the root`);
      assert.equal(span.attributes['model.name'], 'fraud');
      assert.equal(span.attributes['model.version'], r.json['model_version'], 'the version that answered');
      assert.equal(span.attributes['request.rows'], rows);
    }
    const after = (await collectMetrics(reader)).get('scoring.inference.duration')?.points ?? [];
    assert.equal(count(after), count(before) + 1, 'one more inference recorded');
  });

  it('records the metrics with their units', async () => {
    const m = await collectMetrics(reader);
    for (const name of ['scoring.request.duration', 'scoring.inference.duration', 'scoring.external.duration'])
      assert.equal(m.get(name)?.unit, 'ms', name);
    const deps = new Set(m.get('scoring.external.duration')?.points.map((p) => p.attributes['dependency']));
    assert.ok(deps.has('redis') && deps.has('servicebus'), [...deps].join(','));
    const paths = new Set(m.get('scoring.request.duration')?.points.map((p) => p.attributes['path']));
    assert.ok(paths.has('http') && paths.has('queue'));
    const hits = m.get('scoring.cache.hits')?.points ?? [];
    assert.ok((hits.find((p) => p.attributes['tier'] === 'l1')?.value as number) >= 1);
    const misses = m.get('scoring.cache.misses')?.points ?? [];
    assert.ok((misses.find((p) => p.attributes['tier'] === 'l2')?.value as number) >= 1);
    assert.equal(m.get('scoring.batch.queue_depth')?.unit, '{row}');
    assert.equal(typeof m.get('scoring.batch.queue_depth')?.points[0]?.value, 'number');
    const served = m.get('scoring.model.served')?.points ?? [];
    assert.ok(served.some((p) => p.attributes['model.version'] === '1.0.0' && p.value === 1));
  });

  it('no payment field, note, device id or card number reaches a span, a metric or a log line', async () => {
    const event = validEvent({
      transactionId: 'tr-private-1',
      userId: SECRETS.userId,
      deviceId: SECRETS.deviceId,
      note: `${SECRETS.note} card ${SECRETS.card}`,
      merchantId: SECRETS.card,
    });
    const r = await http().post(`${host.url}/api/score`, JSON.stringify(event));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    embeddedBus.send('payments', { messageId: 'msg-private', body: { ...event, transactionId: 'tr-private-2' } });
    await waitFor('the queued private payment', () =>
      embeddedBus.messages('risk-completed').find((m) => m.messageId === 'tr-private-2'),
    );
    const invalid = await http().post(`${host.url}/api/score`, JSON.stringify({ ...event, amount: 'x' }));
    assert.equal(invalid.status, 400);
    const spans = JSON.stringify(exporter.getFinishedSpans().map(dump));
    const metrics = JSON.stringify([...(await collectMetrics(reader)).entries()]);
    const lines = logs.join('\n');
    for (const [field, value] of Object.entries(SECRETS)) {
      assert.ok(!spans.includes(value), `${field} in a span`);
      assert.ok(!metrics.includes(value), `${field} in a metric`);
      assert.ok(!lines.includes(value), `${field} in a log line`);
    }
    assert.ok(spans.length > 1000 && lines.length > 100, 'there was something to search');
  });
});

function dump(s: ReadableSpan): unknown {
  return {
    name: s.name,
    attributes: s.attributes,
    events: s.events,
    links: s.links,
    status: s.status,
    resource: s.resource.attributes,
  };
}
