import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { configureSharedEngine } from '../../lib/app';
import { InProcessTopicPublisher } from '../../lib/async/result-publisher';
import { inlineBackendFactory } from '../../lib/inference/ort-session';
import type { LocalHost } from '../../local/host';
import { InProcessBus } from '../../local/in-process-bus';
import type { ServiceBusEmulator } from '../../local/service-bus-emulator';
import { startHostWithBus } from '../support/local-host';
import { validEvent } from '../support/events';
import { faultyFactory, faultyPublisher, randomFaults, type FaultPlan } from '../support/faults';
import { http } from '../support/http';
import { testRedis } from '../support/redis';

const MAX_DELIVERY = 10; // the queue default in Azure (and in infra-bicep)
const BATCH = 16; // messages per trigger call (host.json maxMessageBatchSize)
const none: FaultPlan = () => undefined;

describe('async scoring on the (embedded) Service Bus, through the real trigger', () => {
  const r = testRedis();
  const scoringFaults = { fault: none };
  const publishFaults = { fault: none };
  const stats = { runs: 0, rows: 0 };
  const bus = new InProcessBus();
  let host: LocalHost;
  let sb: ServiceBusEmulator;

  before(async () => {
    configureSharedEngine({
      backendFactory: faultyFactory(
        inlineBackendFactory({ executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' }),
        scoringFaults,
        stats,
      ),
      // Duplicate detection off: the topic keeps every send, so the counts below see every publish.
      publisher: faultyPublisher(new InProcessTopicPublisher(bus, 'risk-completed', false), publishFaults),
    });
    // The settings keep the background readiness probe off: `stats.runs` counts the test's scoring runs only.
    ({ host, sb } = await startHostWithBus({
      bus,
      redisPrefix: r.prefix,
      maxDeliveryCount: MAX_DELIVERY,
      maxMessageBatchSize: BATCH,
    }));
  });
  after(async () => {
    await sb.stop();
    await host.dispose();
    await r.cleanup();
  });
  beforeEach(() => {
    scoringFaults.fault = none;
    publishFaults.fault = none;
  });

  const results = (tx: string): unknown[] =>
    bus
      .messages('risk-completed')
      .filter((m) => m.messageId === tx)
      .map((m) => m.body);
  const send = (body: unknown, messageId: string = randomUUID(), correlationId?: string): void =>
    void bus.send('payments', {
      body: typeof body === 'string' ? body : JSON.stringify(body),
      messageId,
      ...(correlationId === undefined ? {} : { correlationId }),
    });

  it('registers the batch trigger with identity-based connection and %SETTING% names', () => {
    const fn = host.functions.find((f) => f.name === 'scoreQueue');
    assert.equal(fn?.triggerType, 'serviceBusTrigger');
    assert.equal(fn?.trigger['cardinality'], 'many');
    assert.equal(fn?.trigger['queueName'], '%SCORING_QUEUE%');
    assert.equal(fn?.trigger['connection'], 'ServiceBusConnection');
    const outs = Object.values(fn?.metadata.bindings ?? {}) as Record<string, unknown>[];
    assert.ok(
      outs.some((b) => b['type'] === 'serviceBus' && b['queueName'] === '%REJECTED_QUEUE%' && b['direction'] === 'out'),
    );
  });

  it('a message delivered 3 times gives exactly one result, identical, scored once', async () => {
    const tx = `dup-${randomUUID()}`;
    const before = stats.rows;
    for (let i = 0; i < 3; i++) send(validEvent({ transactionId: tx }), `m-${i}`, 'corr-dup');
    await sb.idle();
    const out = results(tx);
    assert.equal(out.length, 1, 'one result sent to the topic (its duplicate detection is off here)');
    const body = out[0] as Record<string, unknown>;
    assert.equal(body['transactionId'], tx);
    assert.equal(body['correlationId'], 'corr-dup');
    assert.match(String(body['scoredAt']), /^\d{4}-\d{2}-\d{2}T/);
    assert.equal(stats.rows - before, 1, 'scored once; redeliveries re-emit the stored result');
    const stored = await r.redis.get(`${r.prefix}result:v1:${tx}`);
    assert.deepEqual(JSON.parse(stored ?? 'null'), body);
  });

  it('a failure between scoring and output re-emits the same stored result on redelivery', async () => {
    const tx = `gap-${randomUUID()}`;
    let failures = 2;
    publishFaults.fault = () => (failures-- > 0 ? randomFaults(1, 1)() : undefined);
    const before = stats.rows;
    send(validEvent({ transactionId: tx }));
    await sb.idle();
    assert.equal(results(tx).length, 1);
    assert.equal(stats.rows - before, 1);
  });

  it('an invalid or non-JSON message goes to the rejected queue with the reason, and is not retried', async () => {
    const bad = validEvent({ transactionId: `bad-${randomUUID()}`, amount: -5, channel: 'fax' });
    send(bad, 'bad-1');
    send('this is not json', 'bad-2');
    await sb.idle();
    const rejected = bus.messages('scoring-rejected').map((m) => m.body as Record<string, unknown>);
    const schema = rejected.find((b) => b['messageId'] === 'bad-1');
    assert.equal(schema?.['reason'], 'validation_failed');
    assert.deepEqual((schema?.['errors'] as { path: string }[]).map((e) => e.path).sort(), ['amount', 'channel']);
    assert.deepEqual(JSON.parse(String(schema?.['originalBody'])), bad);
    assert.equal(schema?.['deliveryCount'], 1, 'delivered once: not retried');
    const text = rejected.find((b) => b['messageId'] === 'bad-2');
    assert.equal(text?.['reason'], 'invalid_json');
    assert.equal(text?.['originalBody'], 'this is not json');
    assert.equal(bus.deadLettered('payments').filter((m) => m.messageId.startsWith('bad-')).length, 0);
  });

  it('a message with NUL or a lone surrogate goes to the rejected queue naming the field, and is not retried', async () => {
    send(validEvent({ transactionId: `nul-${randomUUID()}`, note: 'a\u0000b' }), 'nul-1');
    send(validEvent({ transactionId: `lone-${randomUUID()}`, userId: 'u\uD800' }), 'nul-2');
    await sb.idle();
    const rejected = bus.messages('scoring-rejected').map((m) => m.body as Record<string, unknown>);
    for (const [id, field] of [
      ['nul-1', 'note'],
      ['nul-2', 'userId'],
    ] as const) {
      const r = rejected.find((b) => b['messageId'] === id);
      assert.equal(r?.['reason'], 'validation_failed', id);
      assert.deepEqual(
        (r?.['errors'] as { path: string }[]).map((e) => e.path),
        [field],
      );
      assert.equal(r?.['deliveryCount'], 1, 'delivered once: not retried');
    }
    assert.equal(bus.deadLettered('payments').filter((m) => m.messageId.startsWith('nul-')).length, 0);
  });

  it('a transient failure is redelivered and then succeeds', async () => {
    const tx = `transient-${randomUUID()}`;
    let failures = 2;
    scoringFaults.fault = () => (failures-- > 0 ? randomFaults(1, 2)() : undefined);
    send(validEvent({ transactionId: tx }), `t-${tx}`);
    await sb.idle();
    assert.equal(results(tx).length, 1);
    assert.equal(bus.deadLettered('payments').filter((m) => m.messageId === `t-${tx}`).length, 0);
  });

  it('a permanent transient failure is dead-lettered after the maximum delivery count', async () => {
    const tx = `dead-${randomUUID()}`;
    scoringFaults.fault = randomFaults(1, 3);
    send(validEvent({ transactionId: tx }), `d-${tx}`);
    await sb.idle();
    const dead = bus.deadLettered('payments').find((m) => m.messageId === `d-${tx}`);
    assert.equal(dead?.deliveryCount, MAX_DELIVERY);
    assert.equal(dead?.deadLetterReason, 'MaxDeliveryCountExceeded');
    assert.equal(results(tx).length, 0);
  });

  it('sync (HTTP) and async (queue) paths give the same result for the same event', async () => {
    const event = validEvent({ transactionId: `same-${randomUUID()}`, userId: `u-${randomUUID()}` });
    const viaHttp = await http().post(`${host.url}/api/score`, JSON.stringify(event));
    assert.equal(viaHttp.status, 200);
    send(event);
    await sb.idle();
    const viaQueue = results(String(event['transactionId']))[0] as Record<string, unknown>;
    for (const k of ['transactionId', 'score', 'decision', 'reasons', 'model', 'source'])
      assert.deepEqual(viaQueue[k], viaHttp.json[k], k);
  });

  it('10,000 messages with random transient faults: every transaction exactly one result, none lost', async () => {
    const N = 10_000;
    const run = randomUUID().slice(0, 8);
    scoringFaults.fault = randomFaults(0.1, 42);
    publishFaults.fault = randomFaults(0.05, 43, 'dependency_unavailable');
    const before = stats.rows;
    for (let i = 0; i < N; i++) {
      const tx = `bulk-${run}-${i}`;
      send(validEvent({ transactionId: tx, userId: `user-${i % 500}` }));
      if (i % 7 === 0) send(validEvent({ transactionId: tx, userId: `user-${i % 500}` })); // duplicates too
    }
    await sb.idle();
    const byTx = new Map<string, number>();
    for (const m of bus.messages('risk-completed'))
      if (m.messageId.startsWith(`bulk-${run}-`)) byTx.set(m.messageId, (byTx.get(m.messageId) ?? 0) + 1);
    const dead = bus.deadLettered('payments').filter((m) => String(m.body).includes(`bulk-${run}-`));
    assert.deepEqual(
      dead.map((m) => m.deadLetterErrorDescription),
      [],
      'with 10 deliveries and ~15 % faults per delivery, nothing should be dead-lettered',
    );
    assert.equal(byTx.size, N, 'no transaction lost');
    assert.ok(
      [...byTx.values()].every((c) => c === 1),
      'exactly one result per transaction',
    );
    assert.equal(stats.rows - before, N, 'each transaction scored exactly once');
  });
});
