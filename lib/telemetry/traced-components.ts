/**
 * Decorators that put the scoring stages in spans and metrics without the components knowing: the
 * composition root wraps the context provider, the request router and the result publisher with these.
 */
import { SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import type { OutgoingMessage } from '../async/message-bus';
import type { ResultPublisher } from '../async/result-publisher';
import type { ContextProvider } from '../context/context-provider';
import type { InferenceBackend, RunOptions, RunResult } from '../inference/backend';
import type { TensorTiming } from '../inference/tensor';
import type { Lease } from '../inference/version-leases';
import type { RequestRouter } from '../scoring/scorer';
import { activeTraceparent } from './invocation-tracing';
import type { Telemetry } from './telemetry';
import { errorType, hashUserId, otelTracer } from './tracing';

/**
 * `context` span (`cache.hit`, `cache.status`, `cache.tier`, `user.id` as a keyed hash) and the per-tier
 * cache counters. The span only when tracing is on.
 */
export function tracedContext(provider: ContextProvider, t: Telemetry, now: () => number): ContextProvider {
  const lookup: ContextProvider['lookup'] = async (event, options) => {
    const r = await provider.lookup(event, options);
    t.cacheLookup(r.cache, r.tier);
    return r;
  };
  if (!t.tracer.enabled) return { lookup, dispose: () => provider.dispose() };
  return {
    lookup: (event, options) =>
      t.tracer.span('context', {}, async (span) => {
        if (!span.recording) return lookup(event, options); // not sampled: no hash, no attributes
        span.setAttributes({ 'user.id': hashUserId(event.userId) });
        const t0 = now();
        const r = await lookup(event, options);
        span.setAttributes({
          'cache.hit': r.cache === 'hit',
          'cache.status': r.cache,
          'cache.tier': r.tier ?? (r.cache === 'miss' ? 'origin' : 'none'),
          'context.lookup_ms': Math.round((now() - t0) * 1000) / 1000,
        });
        return r;
      }),
    dispose: () => provider.dispose(),
  };
}

/**
 * `inference.queue` and `inference.run` spans from the backend's own timing. A batch is shared by many
 * requests: each request gets its own pair, carrying the batch's size (`batch.size`) as an attribute, rather
 * than one batch span linked to every request (the batch runs in a worker that has no span context, and
 * per-request spans keep "why was this payment slow" answerable within its own trace).
 */
export function tracedRouter(router: RequestRouter, t: Telemetry): RequestRouter {
  if (!t.tracer.enabled) return router;
  const wrapped = new WeakMap<InferenceBackend, InferenceBackend>(); // one wrapper per backend: the scorer groups by identity
  return {
    acquire(userId: string): Lease {
      const lease = router.acquire(userId);
      let backend = wrapped.get(lease.backend);
      if (backend === undefined) {
        backend = tracedBackend(lease.backend, lease.manifest);
        wrapped.set(lease.backend, backend);
      }
      return { manifest: lease.manifest, backend, release: () => lease.release() };
    },
    shadow: (key, row, served) => router.shadow(key, row, served),
  };
}

function tracedBackend(b: InferenceBackend, m: Lease['manifest']): InferenceBackend {
  const spans = inferenceSpans(b, m.name, m.version);
  return {
    get info() {
      return b.info;
    },
    run: (input: Float32Array, rows: number, options?: RunOptions): Promise<RunResult> =>
      spans(rows, () => b.run(input, rows, options)),
    infer: (request, options) => b.infer(request, options),
    dispose: () => b.dispose(),
  };
}

/**
 * Runs `call` (one inference on backend `b` of model `name` `version`) and, once it settles, records its
 * `inference.queue` and `inference.run` spans from the backend's own timing (an `inference.queue` span with
 * `error.type` if it failed). Nothing when the active trace is not sampled.
 */
export function inferenceSpans(
  b: InferenceBackend,
  name: string,
  version: string,
): <R extends { readonly timing: TensorTiming }>(rows: number, call: () => Promise<R>) => Promise<R> {
  const model: Attributes = {
    'model.name': name,
    'model.version': version,
    'model.provider': b.info.executionProviders[0] ?? 'unknown',
  };
  const tracer = otelTracer();
  return async (rows, call) => {
    const parent = trace.getActiveSpan();
    if (parent !== undefined && !parent.isRecording()) return call(); // trace not sampled
    const start = performance.timeOrigin + performance.now(); // span times are epoch ms
    try {
      const r = await call();
      const { queueMs, inferenceMs, batchSize } = r.timing;
      const attrs = { ...model, 'batch.size': batchSize, 'request.rows': rows };
      tracer.startSpan('inference.queue', { attributes: attrs, startTime: start }).end(start + queueMs);
      const run = tracer.startSpan('inference.run', { attributes: attrs, startTime: start + queueMs });
      run.end(start + queueMs + inferenceMs);
      return r;
    } catch (err) {
      const span = tracer.startSpan('inference.queue', {
        attributes: { ...model, 'request.rows': rows },
        startTime: start,
      });
      span.setAttribute('error.type', errorType(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorType(err) });
      span.end();
      throw err;
    }
  };
}

/**
 * `publish` span (PRODUCER, `messaging.*`) around each result sent to the results topic, its duration as
 * `scoring.external.duration{dependency=servicebus}`, and the span's W3C `traceparent` on the message
 * (application properties `traceparent` and `Diagnostic-Id`), so consumers continue this trace.
 */
export function tracedPublisher(
  publisher: ResultPublisher,
  t: Telemetry,
  topic: string,
  now: () => number,
): ResultPublisher {
  const send = async (message: OutgoingMessage & { readonly messageId: string }): Promise<void> => {
    const t0 = now();
    let ok = false;
    try {
      await publisher.publish(message);
      ok = true;
    } finally {
      t.external('servicebus', now() - t0, ok);
    }
  };
  if (!t.tracer.enabled) return { publish: send, dispose: () => publisher.dispose() };
  const attrs = {
    'messaging.system': 'servicebus',
    'messaging.destination.name': topic,
    'messaging.operation.type': 'send',
    'messaging.operation.name': 'send',
  };
  return {
    publish: (message) =>
      t.tracer.span('publish', attrs, () => {
        const traceparent = activeTraceparent();
        if (traceparent === undefined) return send(message);
        const applicationProperties = { ...message.applicationProperties, traceparent, 'Diagnostic-Id': traceparent };
        return send({ ...message, applicationProperties });
      }),
    dispose: () => publisher.dispose(),
  };
}
