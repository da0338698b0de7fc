import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it, mock } from 'node:test';
import { EscalationBreaker } from '../../lib/escalation/breaker';
import { EscalationFailure } from '../../lib/escalation/failure';
import type { BreakerState, EscalationEvents } from '../../lib/escalation/types';
import { FakeOpenAI } from '../support/openai-peer';
import { deep, escalatorFor, localResult } from './support/escalator';

type Change = Parameters<EscalationEvents['breakerStateChanged']>[0];
const fail = (retryAfterMs?: number) => () =>
  Promise.reject(
    new EscalationFailure('server_error', 'server error (500)', retryAfterMs === undefined ? {} : { retryAfterMs }),
  );
const succeed = () => Promise.resolve('ok');

/** cockatiel reads Date.now() for the open period: Date is mocked, timers stay real. */
function fakeDate(): void {
  mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
}

describe('EscalationBreaker transitions (mocked Date)', () => {
  let changes: Change[];
  let breaker: EscalationBreaker;
  beforeEach(() => {
    fakeDate();
    changes = [];
    breaker = new EscalationBreaker({ cooldownMs: 30_000, on: { breakerStateChanged: (e) => changes.push(e) } });
  });
  afterEach(() => mock.timers.reset());

  async function failTimes(n: number, retryAfterMs?: number): Promise<void> {
    for (let i = 0; i < n; i++) await assert.rejects(breaker.execute(fail(retryAfterMs)), EscalationFailure);
  }

  it('stays closed for 4 consecutive failures; a success resets the count', async () => {
    await failTimes(4);
    assert.equal(breaker.state, 'closed');
    assert.equal(await breaker.execute(succeed), 'ok');
    await failTimes(4);
    assert.equal(breaker.state, 'closed');
    assert.deepEqual(changes, []);
  });

  it('opens on the 5th; refuses without running anything until the cooldown; then one probe; success closes', async () => {
    await failTimes(5);
    assert.equal(breaker.state, 'open');
    assert.deepEqual(changes, [{ state: 'open', previous: 'closed', openForMs: 30_000 }]);
    let ran = 0;
    const counted = () => (ran++, Promise.resolve('ok'));
    await assert.rejects(breaker.execute(counted), (e: EscalationFailure) => e.outcome === 'breaker_open');
    mock.timers.tick(29_999);
    await assert.rejects(breaker.execute(counted), (e: EscalationFailure) => e.outcome === 'breaker_open');
    assert.equal(ran, 0, 'nothing runs while open');
    mock.timers.tick(1);
    let release: (v: string) => void = () => undefined;
    const probe = breaker.execute(() => (ran++, new Promise<string>((r) => (release = r))));
    assert.equal(breaker.state, 'half-open');
    assert.equal(breaker.admits(), false, 'one probe at a time');
    await assert.rejects(breaker.execute(counted), (e: EscalationFailure) => e.outcome === 'breaker_open');
    release('ok');
    assert.equal(await probe, 'ok');
    assert.equal(ran, 1);
    assert.equal(breaker.state, 'closed');
    assert.deepEqual(
      changes.map((c) => c.state),
      ['open', 'half-open', 'closed'] satisfies BreakerState[],
    );
  });

  it('a failed probe opens it again for another cooldown', async () => {
    await failTimes(5);
    mock.timers.tick(30_000);
    await assert.rejects(breaker.execute(fail()), (e: EscalationFailure) => e.outcome === 'server_error');
    assert.equal(breaker.state, 'open');
    mock.timers.tick(29_000);
    await assert.rejects(breaker.execute(succeed), (e: EscalationFailure) => e.outcome === 'breaker_open');
    mock.timers.tick(1_000);
    assert.equal(await breaker.execute(succeed), 'ok');
    assert.deepEqual(
      changes.map((c) => c.state),
      ['open', 'half-open', 'open', 'half-open', 'closed'],
    );
  });

  it('a longer Retry-After on the opening failure keeps it open longer, capped at 5 minutes', async () => {
    await failTimes(5, 120_000);
    assert.equal(changes.at(-1)?.openForMs, 120_000);
    mock.timers.tick(30_000);
    await assert.rejects(breaker.execute(succeed), (e: EscalationFailure) => e.outcome === 'breaker_open');
    mock.timers.tick(90_000);
    assert.equal(await breaker.execute(succeed), 'ok');

    await failTimes(5, 3_600_000);
    assert.equal(changes.at(-1)?.openForMs, 300_000, 'Retry-After capped at 5 min');
  });

  it('a shorter Retry-After never shortens the cooldown', async () => {
    await failTimes(5, 1_000);
    assert.equal(changes.at(-1)?.openForMs, 30_000);
  });
});

describe('the breaker in front of the real client (loopback server, mocked Date)', () => {
  let fake: FakeOpenAI;
  before(async () => (fake = await FakeOpenAI.create()));
  after(() => fake.close());
  beforeEach(() => {
    fakeDate();
    fake.set({ mode: 'ok', retryAfterSec: 60 });
    fake.count = 0;
  });
  afterEach(() => mock.timers.reset());

  it('after 5 failures nothing reaches the server; after the cooldown one probe does and closes it', async () => {
    fake.set({ mode: 'server-error' });
    const { escalator, events } = escalatorFor(fake);
    for (let i = 0; i < 5; i++)
      assert.equal((await escalator.review(deep(), localResult())).escalation?.outcome, 'server_error');
    assert.equal(fake.count, 5);
    const open = await Promise.all(
      Array.from({ length: 20 }, () => escalator.review(deep(), localResult({ decision: 'review' }))),
    );
    for (const r of open) {
      assert.equal(r.source, 'local-fallback');
      assert.equal(r.decision, 'review');
      assert.equal(r.escalation?.outcome, 'breaker_open');
      assert.equal(r.escalation?.latencyMs, 0);
    }
    assert.equal(fake.count, 5, 'nothing is sent while open');
    fake.set({ mode: 'ok' });
    mock.timers.tick(30_000);
    const probe = await escalator.review(deep(), localResult());
    assert.equal(probe.source, 'openai');
    assert.equal(fake.count, 6);
    assert.deepEqual(
      events.breaker.map((b) => b.state),
      ['open', 'half-open', 'closed'],
    );
  });

  it("a 429's Retry-After (120 s) keeps the breaker open past the 30 s cooldown", async () => {
    fake.set({ mode: 'rate-limit', retryAfterSec: 120 });
    const { escalator, events } = escalatorFor(fake);
    for (let i = 0; i < 5; i++) await escalator.review(deep(), localResult());
    assert.equal(events.breaker[0]?.openForMs, 120_000);
    fake.set({ mode: 'ok' });
    mock.timers.tick(60_000);
    assert.equal((await escalator.review(deep(), localResult())).escalation?.outcome, 'breaker_open');
    assert.equal(fake.count, 5);
    mock.timers.tick(60_000);
    assert.equal((await escalator.review(deep(), localResult())).escalation?.outcome, 'ok');
    assert.equal(fake.count, 6);
  });

  it('invalid output and timeouts count as failures too', async () => {
    fake.set({ mode: 'schema-violation' });
    const { escalator, events } = escalatorFor(fake);
    for (let i = 0; i < 3; i++) await escalator.review(deep(), localResult());
    fake.set({ mode: 'ok', delayMs: 2000 });
    for (let i = 0; i < 2; i++) assert.equal(await escalatorTimeout(escalator), 'timeout');
    fake.set({ delayMs: 0 });
    // the response returns at the budget; the breaker records the aborted call as the SDK settles it
    for (let i = 0; i < 100 && events.breaker.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(events.breaker[0]?.state, 'open', 'the breaker opened within 2 s of the 5th failure');
    assert.equal((await escalator.review(deep(), localResult())).escalation?.outcome, 'breaker_open');
  });
});

/** One escalation that times out (the stand-in is slower than the 1.5 s budget). */
async function escalatorTimeout(escalator: ReturnType<typeof escalatorFor>['escalator']): Promise<string | undefined> {
  return (await escalator.review(deep(), localResult())).escalation?.outcome;
}
