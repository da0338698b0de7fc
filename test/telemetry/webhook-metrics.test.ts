/** The webhook metrics: each relay event becomes its counter with its target, event type and error, never a url. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { WebhookMetrics } from '../../lib/telemetry/webhook-metrics';
import { collectMetrics, TestReader } from './support';

describe('webhook metrics', () => {
  it('counts deliveries, failed attempts (a failed pass as target pass) and dead letters', async () => {
    const reader = new TestReader();
    const on = new WebhookMetrics(new MeterProvider({ readers: [reader] }).getMeter('test')).events();
    on.delivered?.({ target: 'webhook', eventType: 'review.opened', attempts: 1 });
    on.delivered?.({ target: 'webhook', eventType: 'review.opened', attempts: 3 });
    on.delivered?.({ target: 'topic', eventType: 'review.closed', attempts: 1 });
    on.failed?.({ target: 'webhook', eventType: 'review.closed', attempts: 1, retryInMs: 10_000, error: 'http_503' });
    on.passFailed?.({ error: 'ECONNREFUSED', retryInMs: 1000 });
    on.deadLettered?.({ target: 'webhook', eventType: 'review.opened', attempts: 30, error: 'timeout', rows: 2 });
    const m = await collectMetrics(reader);
    const points = (name: string) =>
      (m.get(name)?.points ?? []).map((p) => ({ ...(p.attributes as Record<string, unknown>), n: Number(p.value) }));
    const byTarget = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      String(a['target']).localeCompare(String(b['target']));
    assert.deepEqual(points('webhooks.delivered').sort(byTarget), [
      { target: 'topic', event: 'review.closed', n: 1 },
      { target: 'webhook', event: 'review.opened', n: 2 },
    ]);
    assert.deepEqual(points('webhooks.failed').sort(byTarget), [
      { target: 'pass', error: 'ECONNREFUSED', n: 1 },
      { target: 'webhook', event: 'review.closed', error: 'http_503', n: 1 },
    ]);
    assert.deepEqual(points('webhooks.dead_lettered'), [
      { target: 'webhook', event: 'review.opened', error: 'timeout', n: 1 },
    ]);
  });
});
