/**
 * The engine's admission ceiling through the real triggers (local Functions host, own process): with the
 * ceiling held full, a valid request is refused (503 `overloaded` + Retry-After) and a bad one is still
 * answered 400 (the body is read and validated before admission), on `/api/score`, `/api/score/batch` and the
 * OIP infer route; a Service Bus message is sent back to the queue (the invocation fails with
 * the transient `overloaded`: the host abandons it), never rejected as invalid and never stored. Once
 * the gate has room again, the same requests and message are scored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configureSharedEngine, sharedEngine } from '../../lib/app';
import { FEATURE_COUNT } from '../../lib/features/featurizer';
import type { Engine } from '../../lib/engine';
import type { LocalHost } from '../../local/host';
import { InProcessBus } from '../../local/in-process-bus';
import { validEvent } from '../support/events';
import { within } from '../support/eventually';
import { http, type HttpAnswer } from '../support/http';
import { functionsNamed, startLocalHost } from '../support/local-host';

let host: LocalHost;
let engine: Engine;
const MAX_INFLIGHT = 8;

before(async () => {
  Object.assign(process.env, {
    LOG_LEVEL: 'error',
    ADMISSION_MAX_INFLIGHT: String(MAX_INFLIGHT),
    ADMISSION_MIN_INFLIGHT: String(MAX_INFLIGHT), // a fixed ceiling
    ADMISSION_QUEUE_WAIT_MS: '200', // a Service Bus delivery waits this long for a slot, then goes back to the queue
    SCORING_QUEUE: 'payments',
    RESULTS_TOPIC: 'risk-completed',
    REJECTED_QUEUE: 'scoring-rejected',
  });
  configureSharedEngine({ bus: new InProcessBus() }); // as npm start: results go to the embedded bus's topic
  const modules = functionsNamed(['hooks', 'score', 'score-batch', 'score-queue', 'oip-models']);
  host = await startLocalHost({ inProcess: { modules } });
  engine = await sharedEngine();
});
after(async () => {
  await host.dispose();
});

/** Holds every admission slot until the returned function is called. */
async function fillGate(): Promise<() => Promise<void>> {
  const releases: (() => void)[] = [];
  const held = Array.from({ length: MAX_INFLIGHT }, () =>
    engine.admit(60_000, () => new Promise<void>((resolve) => releases.push(resolve))),
  );
  assert.equal(releases.length, MAX_INFLIGHT);
  return async () => {
    for (const r of releases) r();
    await Promise.all(held);
  };
}

/** Requests refused by admission so far (the ceiling or the deadline rule). */
function refusals(): number {
  const stats = engine.admissionStats;
  return (stats?.ceiling?.refused ?? 0) + (stats?.deadline.refused ?? 0);
}

/** POSTs on a fresh connection (no keep-alive reuse race between bursts); a hung request fails after 60 s. */
function post(route: string, body: string): Promise<HttpAnswer> {
  return http(`${host.url}/api/`).post(route, body, { fresh: true, timeoutMs: 60_000 });
}

describe('admission when the ceiling is full', () => {
  it('answers a bad body 400 and refuses valid work 503 overloaded + Retry-After while the ceiling is full', async () => {
    const oipRow = JSON.stringify({
      inputs: [{ name: 'features', shape: [1, FEATURE_COUNT], datatype: 'FP32', data: Array(FEATURE_COUNT).fill(0.5) }],
    });
    const release = await fillGate();
    const refusedBefore = refusals();
    try {
      for (const [route, body, field] of [
        ['score', '{"not":"a payment"', 'malformed JSON'], // not even JSON
        ['score', JSON.stringify({ ...validEvent(), amount: 'ten', currency: 7 }), 'amount'],
        ['score/batch', JSON.stringify({ events: 'none' }), 'events'],
      ] as const) {
        const r = await post(route, body);
        assert.equal(r.status, 400, `${route} ${body}: ${JSON.stringify(r.json)}`);
        assert.match(JSON.stringify(r.json['errors'] ?? r.json), new RegExp(field));
      }
      const bad = await post('v2/models/fraud/infer', JSON.stringify({ inputs: [{ name: 'features' }] }));
      assert.equal(bad.status, 400, `OIP: ${JSON.stringify(bad.json)}`);
      assert.equal(typeof bad.json['error'], 'string');
      const allBad = await post('score/batch', JSON.stringify({ events: [{}, { transactionId: 'x' }] }));
      assert.equal(allBad.status, 200, 'a batch of invalid events only is answered without admission');
      assert.equal(refusals(), refusedBefore, 'no bad request was counted by admission');
      for (const [route, body] of [
        ['score', JSON.stringify(validEvent())],
        ['score/batch', JSON.stringify({ events: [validEvent(), {}] })],
        ['v2/models/fraud/infer', oipRow],
      ] as const) {
        const r = await post(route, body);
        assert.equal(r.status, 503, `${route}: ${JSON.stringify(r.json)}`);
        assert.ok(Number(r.headers.get('retry-after')) >= 1, route);
      }
      assert.equal(refusals(), refusedBefore + 3, `valid requests refused: ${JSON.stringify(engine.admissionStats)}`);
    } finally {
      await release();
    }
    const ok = await post('score', JSON.stringify(validEvent({ transactionId: 'after-door' })));
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    const infer = await post('v2/models/fraud/infer', oipRow);
    assert.equal(infer.status, 200, JSON.stringify(infer.json));
  });

  it('a Service Bus delivery waits for a slot instead of being refused: scored once the gate has room', async () => {
    const event = validEvent({ transactionId: 'sb-wait-1' });
    const release = await fillGate();
    const refusedBefore = engine.admissionStats?.ceiling?.refused ?? 0;
    const delivery = host.invoke('scoreQueue', JSON.stringify(event), { MessageId: 'm-wait', DeliveryCount: 1 });
    for (let turns = 0; engine.admissionStats?.ceiling?.waiting !== 1; turns++) {
      assert.ok(turns < 10_000, 'the delivery never reached the gate');
      await new Promise((resolve) => setImmediate(resolve));
    }
    // the delivery waits in the gate (it holds no slot and was not refused): free the slots
    await release();
    await within(delivery, 'the waiting Service Bus delivery to be scored once the slots were freed'); // not thrown back
    assert.equal(engine.admissionStats?.ceiling?.refused, refusedBefore, 'the waiting delivery was not refused');
    const again = await engine.processMessage(JSON.stringify(event), { messageId: 'm-wait', deliveryCount: 2 });
    // already scored and published by the waiting delivery: a redelivery finds it (never a second score)
    assert.ok(
      again.kind === 'duplicate' || (again.kind === 'scored' && again.replayed),
      `stored by the waiting delivery: ${JSON.stringify(again).slice(0, 300)}`,
    );
  });

  it('a Service Bus message refused after its wait goes back to the queue: a transient failure, not a rejection, nothing stored', async () => {
    const event = validEvent({ transactionId: 'sb-door-1' });
    const release = await fillGate();
    try {
      await assert.rejects(
        host.invoke('scoreQueue', JSON.stringify(event), { MessageId: 'm-1', DeliveryCount: 1 }),
        (err: unknown) => {
          assert.match(String((err as Error).message), /capacity|overloaded/i);
          return true;
        },
      );
    } finally {
      await release();
    }
    // redelivered: scored once, not as a replay (the refused delivery stored nothing)
    const outcome = await engine.processMessage(JSON.stringify(event), { messageId: 'm-1', deliveryCount: 2 });
    assert.equal(outcome.kind, 'scored');
    assert.equal(outcome.kind === 'scored' && outcome.replayed, false);
  });
});
