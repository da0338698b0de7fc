/**
 * The engine's admission ceiling through the real triggers (local Functions host, own process): with the
 * ceiling held full, a request is refused before its body is read or validated (503 `overloaded` + Retry-After even
 * for an invalid body), and a Service Bus message is sent back to the queue (the invocation fails with
 * the transient `overloaded`: the host abandons it), never rejected as invalid and never stored. Once
 * the gate has room again, the same requests and message are scored.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sharedEngine } from '../../lib/app';
import type { Engine } from '../../lib/engine';
import { LocalHost } from '../../local/host';
import { validEvent } from '../support/events';
import { within } from '../support/eventually';
import { postFresh, type Answer } from './support/post';

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
  const modules = ['hooks', 'score', 'score-batch', 'score-queue'].map((m) =>
    path.join(__dirname, '..', '..', 'functions', `${m}.js`),
  );
  host = await LocalHost.create({ port: 0, appModules: modules, log: () => undefined });
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

function post(route: string, body: string): Promise<Answer> {
  return postFresh(`${host.url}/api/${route}`, body);
}

describe('admission when the ceiling is full', () => {
  it('refuses before the body is read or validated: 503 overloaded + Retry-After, even for an invalid body', async () => {
    const release = await fillGate();
    try {
      for (const [route, body] of [
        ['score', '{"not":"a payment"'], // not even JSON
        ['score', JSON.stringify(validEvent())],
        ['score/batch', JSON.stringify({ events: [validEvent()] })],
      ] as const) {
        const r = await post(route, body);
        assert.equal(r.status, 503, route);
        assert.equal(r.json['code'], 'overloaded');
        assert.ok(Number(r.headers['retry-after']) >= 1);
        assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
      }
      // refused by the ceiling, or by the deadline rule when a rate measured earlier says the full engine
      // cannot drain in time: either way before the body was read
      const stats = engine.admissionStats;
      const refused = (stats?.ceiling?.refused ?? 0) + (stats?.deadline.refused ?? 0);
      assert.ok(refused >= 3, `refusals counted: ${JSON.stringify(stats)}`);
    } finally {
      await release();
    }
    const ok = await post('score', JSON.stringify(validEvent({ transactionId: 'after-door' })));
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    const bad = await post('score', '{"not":"a payment"');
    assert.equal(bad.status, 400, 'once admitted, bad input gets its own problem');
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
