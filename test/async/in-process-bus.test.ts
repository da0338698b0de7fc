import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InProcessBus } from '../../lib/async/in-process-bus';

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
    let now = 0;
    const bus = new InProcessBus({ duplicateWindowMs: 1000, now: () => now });
    assert.equal(bus.send('t', { body: 1, messageId: 'x' }, true), true);
    assert.equal(bus.send('t', { body: 2, messageId: 'x' }, true), false);
    now = 1001;
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

  it('wakes a waiting receiver and cleans up waiters that time out', async () => {
    const bus = new InProcessBus();
    const waiting = bus.waitForMessage('q', 10_000);
    bus.send('q', { body: 'x' });
    await waiting;
    await bus.waitForMessage('empty', 1);
    assert.equal(bus.receive('q')?.body, 'x');
  });
});
