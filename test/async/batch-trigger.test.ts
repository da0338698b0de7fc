/**
 * The Service Bus batch trigger (`cardinality: 'many'`) through the real programming model and the local
 * host, fed by the embedded bus as the Service Bus extension feeds a batch function. Every per-message
 * guarantee holds inside a batch. Publishes are counted at the broker: the embedded topic with its
 * duplicate detection off keeps every send.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { configureSharedEngine, sharedEngine } from '../../lib/app';
import { batchMessageMeta } from '../../lib/async/message-meta';
import { InProcessTopicPublisher, type ResultPublisher } from '../../lib/async/result-publisher';
import { AppError } from '../../lib/errors/errors';
import { inlineBackendFactory } from '../../lib/inference/ort-session';
import type { LocalHost } from '../../local/host';
import { InProcessBus } from '../../local/in-process-bus';
import { ServiceBusEmulator } from '../../local/service-bus-emulator';
import { validEvent } from '../support/events';
import { faultyFactory, type FaultPlan } from '../support/faults';
import { startHost } from '../support/local-host';
import { testRedis } from '../support/redis';

const TOPIC = 'risk-completed';
const QUEUE = 'payments';
const REJECTED = 'scoring-rejected';
const none: FaultPlan = () => undefined;
const transient = (): AppError =>
  new AppError('dependency_unavailable', 'injected transient fault', { transient: true });

/** One call of the trigger, as the function received it. */
interface Call {
  readonly messages: unknown[];
  readonly messageIds: unknown;
  readonly deliveryCounts: unknown;
}

describe('Service Bus batch trigger: one engine call per delivery batch, per-message guarantees', () => {
  const r = testRedis();
  const bus = new InProcessBus();
  const scoring = { fault: none };
  const stats = { runs: 0, rows: 0 };
  /** Transaction ids whose next publish fails once (a transient failure of one message of a batch). */
  const failPublishOnce = new Set<string>();
  const calls: Call[] = [];
  /** The embedded bus's lines for a failed (abandoned, so redelivered) delivery batch, with the reason. */
  const abandoned: string[] = [];
  let host: LocalHost;
  let sb: ServiceBusEmulator;
  let hook: { dispose(): unknown } | undefined;

  before(async () => {
    Object.assign(process.env, {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: r.prefix,
      SCORING_QUEUE: QUEUE,
      RESULTS_TOPIC: TOPIC,
      REJECTED_QUEUE: REJECTED,
    });
    const topic = new InProcessTopicPublisher(bus, TOPIC, false); // duplicate detection off: every send counts
    const publisher: ResultPublisher = {
      publish: (m) => (failPublishOnce.delete(m.messageId) ? Promise.reject(transient()) : topic.publish(m)),
      dispose: () => topic.dispose(),
    };
    configureSharedEngine({
      backendFactory: faultyFactory(
        inlineBackendFactory({ executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' }),
        scoring,
        stats,
      ),
      publisher,
    });
    sb = new ServiceBusEmulator({
      bus,
      maxDeliveryCount: 10,
      maxMessageBatchSize: 64,
      log: (line) => void abandoned.push(line),
    });
    host = await startHost();
    // the model loaded and warmed before any delivery: no test's first batch pays the cold start
    await (await sharedEngine()).start();
    // imported once the local host installed its core shim, as the app's own modules are
    const { app } = await import('@azure/functions');
    hook = app.hook.preInvocation((c) => {
      if (c.invocationContext.functionName !== 'scoreQueue') return;
      const t = c.invocationContext.triggerMetadata ?? {};
      calls.push({
        messages: c.inputs[0] as unknown[],
        messageIds: t['messageIdArray'],
        deliveryCounts: t['deliveryCountArray'],
      });
    });
    sb.start(host);
  });
  after(async () => {
    hook?.dispose();
    await sb.stop();
    await host.dispose();
    await r.cleanup();
  });
  beforeEach(() => {
    scoring.fault = none;
    failPublishOnce.clear();
    calls.length = 0;
    abandoned.length = 0;
  });

  const published = (tx: string): unknown[] =>
    bus
      .messages(TOPIC)
      .filter((m) => m.messageId === tx)
      .map((m) => m.body);
  const rejectedFor = (messageId: string): Record<string, unknown>[] =>
    bus
      .messages(REJECTED)
      .map((m) => m.body as Record<string, unknown>)
      .filter((b) => b['messageId'] === messageId);
  /** Queues one message per body, synchronously, so the waiting trigger finds them all in one batch. */
  const sendAll = (bodies: readonly unknown[], ids: readonly string[]): void =>
    bodies.forEach(
      (body, i) =>
        void bus.send(QUEUE, {
          body: typeof body === 'string' ? body : JSON.stringify(body),
          messageId: ids[i] as string,
          correlationId: `corr-${ids[i] as string}`,
        }),
    );
  const run = (): string => randomUUID().slice(0, 8);

  // The claim is about one delivery: the messages received together are one trigger call and one inference.
  // A starved machine may fail a delivery transiently (a lock lease or the batch deadline runs out) and the bus
  // then redelivers the same batch: that is another delivery, and each one must still be whole. So the test
  // checks every call, not how many the scheduler let happen.
  it('a delivery batch is one trigger call (bodies and …Array metadata as the host sends them) and one inference', async () => {
    const id = run();
    const txs = Array.from({ length: 8 }, (_, i) => `one-${id}-${i}`);
    const before = { ...stats };
    sendAll(
      txs.map((tx) => validEvent({ transactionId: tx })),
      txs.map((tx) => `m-${tx}`),
    );
    await sb.idle();
    const why = `calls' delivery counts ${JSON.stringify(calls.map((c) => c.deliveryCounts))}; ${abandoned.join(' | ')}`;
    assert.ok(calls.length >= 1, 'at least one call');
    assert.equal(calls.length, abandoned.length + 1, `a call more than one is a redelivery of a failed one: ${why}`);
    calls.forEach((call, k) => {
      assert.deepEqual(
        call.messages.map((m) => (m as { transactionId: string }).transactionId),
        txs,
        `call ${k + 1}: the whole batch's bodies, in order, parsed by the library`,
      );
      assert.deepEqual(
        call.messageIds,
        txs.map((tx) => `m-${tx}`),
        `call ${k + 1}: the ids`,
      );
      assert.deepEqual(call.deliveryCounts, Array<number>(8).fill(k + 1), `call ${k + 1} is delivery ${k + 1}: ${why}`);
    });
    const runs = stats.runs - before.runs;
    assert.ok(runs >= 1 && runs <= calls.length, `one inference call per delivery at most (${runs}): ${why}`);
    if (calls.length === 1) assert.equal(runs, 1, 'one inference call');
    assert.equal(stats.rows - before.rows, 8 * runs, `each inference call scored the whole batch: ${why}`);
    for (const tx of txs) {
      const out = published(tx);
      assert.equal(out.length, 1, tx);
      assert.equal((out[0] as Record<string, unknown>)['correlationId'], `corr-m-${tx}`, 'its own correlation id');
    }
  });

  it('a bad message is rejected alone, with its reason; the rest of its batch is scored', async () => {
    const id = run();
    const bad = validEvent({ transactionId: `bad-${id}`, amount: -1 });
    sendAll(
      [validEvent({ transactionId: `ok1-${id}` }), bad, 'not json {', validEvent({ transactionId: `ok2-${id}` })],
      [`ok1-${id}`, `bad-${id}`, `text-${id}`, `ok2-${id}`],
    );
    await sb.idle();
    assert.equal(calls.length, 1, `one call; abandoned deliveries: ${abandoned.join(' | ')}`);
    assert.equal(published(`ok1-${id}`).length, 1);
    assert.equal(published(`ok2-${id}`).length, 1);
    const [schema, ...moreSchema] = rejectedFor(`bad-${id}`);
    assert.equal(moreSchema.length, 0);
    assert.equal(schema?.['reason'], 'validation_failed');
    assert.deepEqual(
      (schema?.['errors'] as { path: string }[]).map((e) => e.path),
      ['amount'],
    );
    assert.deepEqual(JSON.parse(String(schema?.['originalBody'])), bad);
    const [text, ...moreText] = rejectedFor(`text-${id}`);
    assert.equal(moreText.length, 0);
    assert.equal(text?.['reason'], 'invalid_json');
    assert.equal(text?.['originalBody'], 'not json {');
    assert.equal(text?.['correlationId'], `corr-text-${id}`);
  });

  it('one message of a batch fails transiently: the whole batch is redelivered, each transaction published exactly once', async () => {
    const id = run();
    const txs = Array.from({ length: 6 }, (_, i) => `redeliver-${id}-${i}`);
    failPublishOnce.add(txs[3] as string);
    const before = { ...stats };
    sendAll(
      [...txs.map((tx) => validEvent({ transactionId: tx })), { transactionId: `bad-${id}` }],
      [...txs, `bad-${id}`],
    );
    await sb.idle();
    assert.equal(calls.length, 2, 'delivered twice');
    assert.deepEqual(calls[0]?.deliveryCounts, [1, 1, 1, 1, 1, 1, 1]);
    assert.deepEqual(calls[1]?.deliveryCounts, [2, 2, 2, 2, 2, 2, 2], 'the whole batch came back');
    for (const tx of txs) assert.equal(published(tx).length, 1, `${tx}: one send at the broker`);
    assert.equal(stats.rows - before.rows, 6, 'scored once each: the failed one re-published its stored result');
    const stored = JSON.parse((await r.redis.get(`${r.prefix}result:v1:${txs[3] as string}`)) ?? 'null') as unknown;
    assert.deepEqual(published(txs[3] as string)[0], stored);
    const rejected = rejectedFor(`bad-${id}`);
    assert.equal(rejected.length, 1, 'rejected once, by the call that succeeded');
    assert.equal(rejected[0]?.['deliveryCount'], 2);
    assert.equal(bus.deadLettered(QUEUE).length, 0);
  });

  it('the inference fails for the whole batch: every message is redelivered and then scored once', async () => {
    const id = run();
    const txs = Array.from({ length: 5 }, (_, i) => `overload-${id}-${i}`);
    let failures = 1;
    scoring.fault = () => (failures-- > 0 ? new AppError('overloaded', 'injected', { transient: true }) : undefined);
    const before = { ...stats };
    sendAll(
      txs.map((tx) => validEvent({ transactionId: tx })),
      txs,
    );
    await sb.idle();
    assert.equal(calls.length, 2);
    assert.equal(stats.rows - before.rows, 5);
    for (const tx of txs) assert.equal(published(tx).length, 1, tx);
  });

  it('a transaction repeated within a batch is scored and published once', async () => {
    const tx = `repeat-${run()}`;
    const before = { ...stats };
    sendAll(
      [validEvent({ transactionId: tx }), validEvent({ transactionId: tx }), validEvent({ transactionId: tx })],
      [`${tx}-a`, `${tx}-b`, `${tx}-c`],
    );
    await sb.idle();
    assert.equal(calls.length, 1, `one call; abandoned deliveries: ${abandoned.join(' | ')}`);
    assert.equal(stats.rows - before.rows, 1);
    const out = published(tx);
    assert.equal(out.length, 1);
    assert.equal((out[0] as Record<string, unknown>)['correlationId'], `corr-${tx}-a`, 'the first message wins');
  });

  it('in a batch, a stored result is re-published (never re-scored) and a confirmed publish is not repeated', async () => {
    const id = run();
    const storedTx = `stored-${id}`;
    const doneTx = `done-${id}`;
    const freshTx = `fresh-${id}`;
    const kept = {
      transactionId: storedTx,
      score: 0.123456,
      decision: 'approve',
      reasons: [],
      model: { name: 'fraud', version: '0.0.1-kept' },
      source: 'local',
      cache: 'miss',
      timing: { queueMs: 0, inferenceMs: 1, batchSize: 1 },
      scoredAt: '2026-11-30T10:00:00.000Z',
    };
    await r.redis.set(`${r.prefix}result:v1:${storedTx}`, JSON.stringify(kept), 'EX', 3600);
    await r.redis.set(`${r.prefix}published:v1:${doneTx}`, '1', 'EX', 3600);
    const before = { ...stats };
    sendAll(
      [storedTx, doneTx, freshTx].map((tx) => validEvent({ transactionId: tx })),
      [storedTx, doneTx, freshTx],
    );
    await sb.idle();
    assert.equal(calls.length, 1, `one call; abandoned deliveries: ${abandoned.join(' | ')}`);
    assert.equal(stats.rows - before.rows, 1, 'only the fresh one is scored');
    assert.deepEqual(published(storedTx), [kept]);
    assert.deepEqual(published(doneTx), []);
    assert.equal(published(freshTx).length, 1);
  });

  it('reads each message’s metadata from the …Array keys, tolerating missing arrays and nulls', () => {
    const metas = batchMessageMeta(
      {
        messageIdArray: ['a', 'b'],
        deliveryCountArray: [1, 3],
        correlationIdArray: [null, 'c-b'],
        applicationPropertiesArray: [{ k: 1 }, null],
      },
      3,
    );
    assert.deepEqual(metas, [
      { messageId: 'a', deliveryCount: 1, applicationProperties: { k: 1 } },
      { messageId: 'b', deliveryCount: 3, correlationId: 'c-b' },
      {},
    ]);
    assert.deepEqual(batchMessageMeta(undefined, 1), [{}]);
  });
});
