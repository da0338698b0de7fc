/**
 * host.json's HTTP throttles with the Functions host's semantics (`local/http-throttle.ts`): at most
 * `maxConcurrentRequests` execute, the next wait first come first served, and a request over
 * `maxOutstandingRequests` (waiting + executing) is refused (429) at once; `-1` or absent = unbounded.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { within } from '../support/eventually';
import { ClientGoneError, HttpThrottle, type ThrottleRelease } from '../../local/http-throttle';

/** Lets granted slots' promise callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('HttpThrottle', () => {
  it('runs maxConcurrentRequests at once, queues the next in order, and refuses past maxOutstandingRequests', async () => {
    const throttle = new HttpThrottle({ maxConcurrentRequests: 2, maxOutstandingRequests: 4 });
    const started: number[] = [];
    const releases = new Map<number, ThrottleRelease>();
    const entries = [0, 1, 2, 3].map((i) => {
      const p = throttle.enter();
      assert.ok(p !== undefined, `request ${i} is held`);
      return p.then((release) => {
        started.push(i);
        releases.set(i, release);
      });
    });
    assert.equal(throttle.enter(), undefined, 'the fifth request is over maxOutstandingRequests: 429');
    await settle();
    assert.deepEqual(started, [0, 1], 'two execute, two wait');
    releases.get(1)?.();
    releases.get(1)?.(); // only the first release counts
    await settle();
    assert.deepEqual(started, [0, 1, 2], 'a freed slot goes to the oldest waiter');
    assert.deepEqual(throttle.stats, { executing: 2, waiting: 1, rejected: 1 });
    releases.get(0)?.();
    await Promise.all(entries);
    assert.deepEqual(started, [0, 1, 2, 3]);
    releases.get(2)?.();
    releases.get(3)?.();
    assert.equal(throttle.outstanding, 0);
  });

  it('never holds more than maxOutstandingRequests nor runs more than maxConcurrentRequests (any enter/release order)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 6 }),
        fc.array(fc.oneof(fc.constant('enter' as const), fc.nat({ max: 20 })), { maxLength: 80 }),
        async (concurrent, extra, ops) => {
          const outstanding = concurrent + extra;
          const throttle = new HttpThrottle({ maxConcurrentRequests: concurrent, maxOutstandingRequests: outstanding });
          const running: ThrottleRelease[] = [];
          let held = 0;
          for (const o of ops) {
            if (o === 'enter') {
              const p = throttle.enter();
              if (p === undefined) assert.equal(held, outstanding, 'refused only when full');
              else {
                held++;
                void p.then((r) => running.push(r));
              }
            } else if (running.length > 0) {
              running.splice(o % running.length, 1)[0]?.();
              held--;
            }
            await settle();
            assert.ok(running.length <= concurrent, `${running.length} running > ${concurrent}`);
            assert.equal(throttle.outstanding, held);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('is unbounded without settings (-1 or absent), as on a dedicated plan', () => {
    const throttle = new HttpThrottle({ maxConcurrentRequests: -1 });
    for (let i = 0; i < 5000; i++) assert.ok(throttle.enter() !== undefined);
    assert.equal(throttle.stats.waiting, 0);
  });

  it('a waiter whose client goes leaves the queue at once: it never takes a slot nor counts as outstanding', async () => {
    const throttle = new HttpThrottle({ maxConcurrentRequests: 1, maxOutstandingRequests: 3 });
    const first = await throttle.enter();
    assert.ok(first !== undefined);
    const client = new AbortController();
    const gone = throttle.enter(client.signal);
    const next = throttle.enter();
    assert.ok(gone !== undefined && next !== undefined, 'both are held');
    assert.deepEqual(throttle.stats, { executing: 1, waiting: 2, rejected: 0 });
    client.abort();
    await assert.rejects(within(gone, 'the gone waiter to be refused', 10_000), ClientGoneError);
    assert.deepEqual(throttle.stats, { executing: 1, waiting: 1, rejected: 0 }, 'out of the queue');
    first();
    const release = await within(next, 'the slot to pass to the waiter still there', 10_000);
    assert.deepEqual(throttle.stats, { executing: 1, waiting: 0, rejected: 0 });
    release();
    assert.equal(throttle.outstanding, 0);
    client.abort(); // a late abort changes nothing
    assert.equal(throttle.outstanding, 0);
  });

  it('a request whose client is already gone is refused before it takes anything', async () => {
    const throttle = new HttpThrottle({ maxConcurrentRequests: 1 });
    const entered = throttle.enter(AbortSignal.abort());
    assert.ok(entered !== undefined, 'not a 429');
    await assert.rejects(within(entered, 'the gone request to be refused', 10_000), ClientGoneError);
    assert.equal(throttle.outstanding, 0);
  });

  it('whatever clients go away in whatever order, every slot comes back (no leak)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.record({ leaves: fc.boolean(), at: fc.nat({ max: 10 }) }), { maxLength: 30 }),
        async (concurrent, requests) => {
          const throttle = new HttpThrottle({ maxConcurrentRequests: concurrent, maxOutstandingRequests: 100 });
          const clients = requests.map(() => new AbortController());
          const served: Promise<void>[] = requests.map((r, i) => {
            const entered = throttle.enter(clients[i]?.signal);
            assert.ok(entered !== undefined);
            return entered.then(
              async (release) => {
                await settle(); // executing
                release();
              },
              (err: unknown) => assert.ok(err instanceof ClientGoneError),
            );
          });
          for (let step = 0; step <= 10; step++) {
            requests.forEach((r, i) => r.leaves && r.at === step && clients[i]?.abort());
            await settle();
          }
          await within(Promise.all(served), 'every request to be served or refused', 10_000);
          assert.deepEqual(throttle.stats, { executing: 0, waiting: 0, rejected: 0 });
        },
      ),
      { numRuns: 100 },
    );
  });
});
