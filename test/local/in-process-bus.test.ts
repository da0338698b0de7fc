import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InProcessBus } from '../../local/in-process-bus';
import { FakeClock } from '../support/clock';

describe('in-process bus (Service Bus semantics)', () => {
  it('peek-locks, counts deliveries, redelivers on abandon and dead-letters after the maximum', () => {
    const bus = new InProcessBus();
    bus.send('q', { body: 'a', messageId: 'm1' });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const m = bus.receive('q');
      assert.equal(m?.messageId, 'm1');
      assert.equal(m?.deliveryCount, attempt);
      assert.equal(bus.inFlight('q'), 1);
      assert.equal(bus.receive('q'), undefined, 'a locked message is not delivered twice at once');
      bus.abandon('q', m!, 3, `boom ${attempt}`);
    }
    assert.equal(bus.messages('q').length, 0);
    assert.equal(bus.deadLettered('q').length, 1);
    assert.equal(bus.deadLettered('q')[0]?.deadLetterReason, 'MaxDeliveryCountExceeded');
    assert.equal(bus.deadLettered('q')[0]?.deadLetterErrorDescription, 'boom 3');
  });

  it('completes a message for good', () => {
    const bus = new InProcessBus();
    bus.send('q', { body: 1 });
    const m = bus.receive('q')!;
    bus.complete('q', m);
    assert.equal(bus.inFlight('q'), 0);
    assert.equal(bus.receive('q'), undefined);
  });

  it('drops duplicate message ids on topics within the window only', () => {
    const clock = new FakeClock(0);
    const bus = new InProcessBus({ duplicateWindowMs: 1000, now: clock.now });
    assert.equal(bus.send('t', { body: 1, messageId: 'x' }, true), true);
    assert.equal(bus.send('t', { body: 2, messageId: 'x' }, true), false);
    clock.t = 1001;
    assert.equal(bus.send('t', { body: 3, messageId: 'x' }, true), true);
    assert.deepEqual(
      bus.messages('t').map((m) => m.body),
      [1, 3],
    );
    assert.equal(bus.send('q', { body: 1, messageId: 'x' }), true);
    assert.equal(bus.send('q', { body: 1, messageId: 'x' }), true, 'queues without detection keep duplicates');
  });

  it('stays bounded', () => {
    const bus = new InProcessBus({ maxMessagesPerEntity: 5 });
    for (let i = 0; i < 20; i++) bus.send('t', { body: i, messageId: String(i) }, true);
    assert.deepEqual(
      bus.messages('t').map((m) => m.body),
      [15, 16, 17, 18, 19],
    );
  });

  // the bus waits with the global setTimeout: the test owns those timers (mock timers), so a waiter can only be
  // woken by what the test does, never by its own timer running out on a slow machine
  it('wakes a waiting receiver when a message is sent, long before its timeout', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const bus = new InProcessBus();
    const waiting = settled(bus.waitForMessage('q', 10_000));
    t.mock.timers.tick(9_999);
    await turn();
    assert.equal(waiting.done, false, 'nothing sent yet: the receiver still waits');
    bus.send('other', { body: 'y' });
    await turn();
    assert.equal(waiting.done, false, 'a message on another queue does not wake it');
    bus.send('q', { body: 'x' });
    await turn();
    assert.equal(waiting.done, true, 'the send woke the waiting receiver');
    assert.equal(bus.receive('q')?.body, 'x');
  });

  it('resolves at once when a message is waiting, and at the timeout when none comes', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const bus = new InProcessBus();
    bus.send('q', { body: 'x' });
    const ready = settled(bus.waitForMessage('q', 10_000));
    await turn();
    assert.equal(ready.done, true, 'a message is already waiting');
    const empty = settled(bus.waitForMessage('empty', 500));
    t.mock.timers.tick(499);
    await turn();
    assert.equal(empty.done, false, 'before the timeout');
    t.mock.timers.tick(1);
    await turn();
    assert.equal(empty.done, true, 'at the timeout, with no message');
    assert.equal(bus.receive('empty'), undefined);
  });
});

/** Tracks whether `p` has settled. */
function settled(p: Promise<unknown>): { readonly done: boolean } {
  const s = { done: false };
  void p.then(() => (s.done = true));
  return s;
}

/** Lets settled promises run their callbacks (setImmediate is not mocked). */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
