/**
 * The case metrics that count the intake and the verdict outbox: each event becomes its counter with its attributes,
 * never a payment field; the SLA gauge reports each queue's open cases past their deadline, a queue seen once at 0
 * when it has none left.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { CaseMetrics } from '../../lib/telemetry/case-metrics';
import { collectMetrics, TestReader } from './support';

function setUp(): { metrics: CaseMetrics; reader: TestReader } {
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  return { metrics: new CaseMetrics(provider.getMeter('test')), reader };
}

const sumBy = (points: readonly { attributes: object; value: unknown }[], key: string): Record<string, number> =>
  Object.fromEntries(points.map((p) => [String((p.attributes as Record<string, unknown>)[key]), Number(p.value)]));

describe('case metrics', () => {
  it('counts outbox deliveries by kind and failures by kind and error (a failed pass as kind pass)', async () => {
    const { metrics, reader } = setUp();
    const on = metrics.outboxEvents();
    on.delivered?.({ kind: 'label', attempts: 1 });
    on.delivered?.({ kind: 'label', attempts: 2 });
    on.delivered?.({ kind: 'list', attempts: 1 });
    on.failed?.({ kind: 'label', attempts: 1, retryInMs: 1000, error: 'dependency_unavailable' });
    on.passFailed?.({ error: 'ECONNREFUSED', retryInMs: 2000 });
    const m = await collectMetrics(reader);
    assert.deepEqual(sumBy(m.get('cases.outbox.delivered')?.points ?? [], 'kind'), { label: 2, list: 1 });
    const failed = m.get('cases.outbox.failed')?.points ?? [];
    assert.deepEqual(
      failed.map((p) => p.attributes).sort((a, b) => String(a['kind']).localeCompare(String(b['kind']))),
      [
        { kind: 'label', error: 'dependency_unavailable' },
        { kind: 'pass', error: 'ECONNREFUSED' },
      ],
    );
  });

  it('counts hand-offs, exact drops by reason, intake openings, rejections and retries', async () => {
    const { metrics, reader } = setUp();
    const w = metrics.writerEvents();
    const i = metrics.intakeEvents();
    w.handedOff?.({ count: 3, ms: 1 });
    w.dropped?.({ count: 2, reason: 'queue_full' });
    i.written?.({ count: 3, opened: 2, ms: 1 });
    i.rejected?.({ count: 1, reason: 'case_unwritable' });
    i.retrying?.({ count: 3, deliveryCount: 1, waitMs: 1000, error: '57P01' });
    const m = await collectMetrics(reader);
    assert.equal(m.get('cases.handed_off')?.points[0]?.value, 3);
    assert.deepEqual(sumBy(m.get('cases.dropped')?.points ?? [], 'reason'), { queue_full: 2 });
    assert.equal(m.get('cases.opened')?.points[0]?.value, 2);
    assert.deepEqual(sumBy(m.get('cases.rejected')?.points ?? [], 'reason'), { case_unwritable: 1 });
    assert.deepEqual(sumBy(m.get('cases.intake.retries')?.points ?? [], 'error'), { '57P01': 1 });
  });

  it('reports the open cases past their SLA per queue; a queue that has none left reads 0', async () => {
    const { metrics, reader } = setUp();
    const on = metrics.sweepEvents();
    on.slaBreached?.({
      byQueue: [
        { queue: 'velocity', count: 2 },
        { queue: 'general', count: 1 },
      ],
    });
    let m = await collectMetrics(reader);
    assert.deepEqual(sumBy(m.get('cases.sla.breached')?.points ?? [], 'queue'), { velocity: 2, general: 1 });
    on.slaBreached?.({ byQueue: [{ queue: 'general', count: 3 }] });
    m = await collectMetrics(reader);
    assert.deepEqual(sumBy(m.get('cases.sla.breached')?.points ?? [], 'queue'), { velocity: 0, general: 3 });
  });
});
