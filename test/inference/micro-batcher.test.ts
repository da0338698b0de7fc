import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import type { BatcherEvents, MicroBatcherOptions } from '../../lib/inference/batcher-types';
import { MicroBatcher } from '../../lib/inference/micro-batcher';
import { FakeExecutor, row, WIDTH } from './support/fake-executor';
import { FakeTimers, settle } from '../support/clock';

type Logged = { [K in keyof BatcherEvents]: { type: K; e: Parameters<BatcherEvents[K]>[0] } }[keyof BatcherEvents];

function setup(opts: Partial<MicroBatcherOptions> = {}, concurrency = 1, poisonId?: number) {
  const time = new FakeTimers();
  const ex = new FakeExecutor(concurrency, poisonId, time.now);
  const log: Logged[] = [];
  const b = new MicroBatcher({
    executor: ex,
    options: { maxBatchSize: 4, windowMs: 5, queueMax: 16, ...opts },
    now: time.now,
    scheduler: time,
    on: {
      batchStarted: (e) => log.push({ type: 'batchStarted', e }),
      batchFinished: (e) => log.push({ type: 'batchFinished', e }),
      shed: (e) => log.push({ type: 'shed', e }),
      expired: (e) => log.push({ type: 'expired', e }),
    },
  });
  const ask = (id: number, deadlineInMs?: number) =>
    b.run(row(id), 1, deadlineInMs === undefined ? {} : { deadline: time.now() + deadlineInMs });
  const reasons = () => log.flatMap((l) => (l.type === 'batchStarted' ? [l.e.reason] : []));
  return { time, ex, b, log, ask, reasons };
}

const call = (ex: FakeExecutor, i: number) => {
  const c = ex.calls[i];
  assert.ok(c, `batch ${i} was dispatched`);
  return c;
};

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: AppError) => e.code,
  );

describe('MicroBatcher', () => {
  it('dispatches at once when a worker is idle (no timer, no delay)', async () => {
    const { ex, ask, time, reasons } = setup();
    const p = ask(1);
    assert.equal(ex.calls.length, 1);
    assert.deepEqual(FakeExecutor.ids(call(ex, 0)), [1]);
    assert.equal(time.pending.size, 0);
    call(ex, 0).succeed();
    const r = await p;
    assert.equal(r.scores[0], Math.fround(0.001));
    assert.deepEqual(r.timing, { queueMs: 0, inferenceMs: 0, batchSize: 1 });
    assert.deepEqual(reasons(), ['idle']);
  });

  it('batches what accumulates while the worker is busy, and reports queue time', async () => {
    const { ex, ask, time, reasons } = setup();
    void ask(1);
    const p2 = ask(2);
    const p3 = ask(3);
    assert.equal(ex.calls.length, 1);
    time.advance(3);
    call(ex, 0).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 1)), [2, 3]);
    call(ex, 1).succeed();
    const [r2, r3] = await Promise.all([p2, p3]);
    assert.equal(r2.scores[0], Math.fround(0.002));
    assert.equal(r3.scores[0], Math.fround(0.003));
    assert.deepEqual(r2.timing, { queueMs: 3, inferenceMs: 0, batchSize: 2 });
    assert.deepEqual(reasons(), ['idle', 'idle']);
  });

  it('closes a batch at the maximum size while busy', async () => {
    const { ex, ask, reasons } = setup({ maxBatchSize: 4 });
    void ask(1);
    for (const id of [2, 3, 4, 5, 6]) void ask(id);
    call(ex, 0).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 1)), [2, 3, 4, 5]);
    call(ex, 1).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 2)), [6]);
    assert.deepEqual(reasons(), ['idle', 'size', 'idle']);
  });

  it('closes a batch when its window expires while busy; later requests go to the next batch', async () => {
    const { ex, ask, time, reasons } = setup({ windowMs: 5 });
    void ask(1);
    void ask(2);
    time.advance(3);
    void ask(3);
    time.advance(2); // t = 5: the window of the batch opened at t = 0 expires
    void ask(4);
    call(ex, 0).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 1)), [2, 3]);
    call(ex, 1).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 2)), [4]);
    assert.deepEqual(reasons(), ['idle', 'window', 'idle']);
  });

  it('closes a batch early when waiting would miss its earliest deadline', async () => {
    const { ex, ask, time, reasons } = setup({ windowMs: 20 });
    void ask(1);
    time.advance(3);
    call(ex, 0).succeed(); // learns: one row takes 3 ms
    await settle();
    void ask(2); // t = 3, idle: runs at once
    void ask(3, 8); // deadline t = 11; the batch must start by 11 - 3 = 8
    time.advance(4);
    assert.equal(reasons().length, 2);
    time.advance(1); // t = 8
    void ask(4);
    call(ex, 1).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 2)), [3]);
    assert.deepEqual(reasons(), ['idle', 'idle', 'deadline']);
  });

  it('still runs a queued request whose deadline passed while it waited (counted as expired)', async () => {
    const { ex, ask, time, log, b } = setup();
    void ask(1);
    const p2 = code(ask(2, 2));
    const p3 = ask(3);
    time.advance(3);
    call(ex, 0).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 1)), [2, 3]);
    call(ex, 1).succeed();
    assert.equal(await p2, 'resolved');
    assert.equal(await code(p3), 'resolved');
    assert.deepEqual(
      log.filter((l) => l.type === 'expired').map((l) => l.e),
      [{ rows: 1, lateMs: 1 }],
    );
    assert.equal(b.stats.expired, 1);
  });

  it('forgives event-loop lateness: a request that reaches it past its deadline runs if inference can meet its budget', async () => {
    const { ex, time, b, log } = setup();
    const first = b.run(row(1), 1, {});
    time.advance(4);
    call(ex, 0).succeed(); // one row takes 4 ms
    await first;
    void b.run(row(2), 1, {}); // t = 4: the worker is busy from now
    time.advance(20);
    // arrived at the engine at t = 4 with a 10 ms budget; the event loop brings it here only at t = 24
    const late = code(b.run(row(3), 1, { arrivedAt: 4, deadline: 14 }));
    // the same request without its arrival: the deadline is absolute, and inference cannot meet it
    assert.equal(await code(b.run(row(4), 1, { deadline: 14 })), 'deadline_exceeded');
    call(ex, 1).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 2)), [3]);
    call(ex, 2).succeed();
    assert.equal(await late, 'resolved', 'wait ≈ 4 ms, within its 10 ms budget: it runs');
    assert.equal(log.filter((l) => l.type === 'shed').length, 1);
  });

  it('refuses requests when the queue is full, with a retryable overloaded error', async () => {
    const { ex, ask, log, b } = setup({ queueMax: 3 });
    void ask(1); // running: not queued
    const queued = [ask(2), ask(3), ask(4)];
    const err = await ask(5).catch((e: AppError) => e);
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'overloaded');
    assert.equal(err.status, 503);
    assert.equal(err.retryAfterSec, 1);
    assert.deepEqual(
      log.filter((l) => l.type === 'shed').map((l) => l.e),
      [{ reason: 'queue_full', rows: 1, queuedRows: 3 }],
    );
    assert.equal(b.stats.shedQueueFull, 1);
    call(ex, 0).succeed();
    await settle();
    call(ex, 1).succeed();
    await Promise.all(queued);
    const again = ask(6);
    call(ex, 2).succeed();
    assert.equal(await code(again), 'resolved');
  });

  it('refuses at once a request that cannot meet its deadline', async () => {
    const { ex, ask, time, log } = setup();
    void ask(1);
    time.advance(10);
    call(ex, 0).succeed(); // one row takes 10 ms
    await settle();
    void ask(2); // busy until about t = 20
    assert.equal(await code(ask(3, 5)), 'deadline_exceeded');
    assert.equal(log.filter((l) => l.type === 'shed' && l.e.reason === 'deadline').length, 1);
    assert.equal(ex.calls.length, 2);
  });

  it('gives each caller its own rows of a shared batch, in order', async () => {
    const { ex, b, ask } = setup({ maxBatchSize: 8 });
    void ask(1);
    const two = b.run(Float32Array.from([...row(10), ...row(11)]), 2);
    const three = b.run(Float32Array.from([...row(20), ...row(21), ...row(22)]), 3);
    call(ex, 0).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 1)), [10, 11, 20, 21, 22]);
    call(ex, 1).succeed();
    assert.deepEqual([...(await two).scores], [0.01, 0.011].map(Math.fround));
    assert.deepEqual([...(await three).scores], [0.02, 0.021, 0.022].map(Math.fround));
  });

  it('splits a request larger than a batch and reassembles its rows', async () => {
    const { ex, b } = setup({ maxBatchSize: 4 });
    const ids = Array.from({ length: 10 }, (_, i) => 100 + i);
    const p = b.run(Float32Array.from(ids.flatMap((id) => [...row(id)])), 10);
    for (let i = 0; i < 3; i++) {
      await settle();
      call(ex, i).succeed();
    }
    const r = await p;
    assert.deepEqual(
      ex.calls.map((c) => c.rows),
      [4, 4, 2],
    );
    assert.deepEqual(
      [...r.scores],
      ids.map((id) => Math.fround(id / 1000)),
    );
    assert.equal(r.timing.batchSize, 4);
  });

  it('isolates a request that makes its batch fail: only that request fails', async () => {
    const { ex, ask, reasons } = setup({}, 1, 3);
    void ask(1);
    const ps = [ask(2), ask(3), ask(4)].map(code);
    call(ex, 0).succeed();
    for (let i = 0; i < 4; i++) {
      await settle();
      for (const c of ex.open) c.succeed();
    }
    assert.deepEqual(await Promise.all(ps), ['resolved', 'inference_failed', 'resolved']);
    assert.deepEqual(reasons(), ['idle', 'idle', 'isolate', 'isolate', 'isolate']);
  });

  it('fails every request of a batch on a transient error (no retry)', async () => {
    const { ex, ask } = setup();
    void ask(1);
    const ps = [ask(2), ask(3)].map(code);
    call(ex, 0).succeed();
    await settle();
    call(ex, 1).fail(new AppError('inference_failed', 'worker stopped', { transient: true }));
    assert.deepEqual(await Promise.all(ps), ['inference_failed', 'inference_failed']);
    assert.equal(ex.calls.length, 2);
  });

  it('rejects input of the wrong length without touching other requests', async () => {
    const { ex, b, ask } = setup();
    assert.equal(await code(b.run(new Float32Array(WIDTH - 1), 1)), 'inference_failed');
    const ok = ask(1);
    call(ex, 0).succeed();
    assert.equal(await code(ok), 'resolved');
  });

  it('on dispose: rejects queued requests as retryable, waits for the running batch, then disposes the executor', async () => {
    const { ex, ask, b } = setup();
    const running = ask(1);
    const queued = code(ask(2));
    const disposed = b.dispose();
    assert.equal(await queued, 'model_not_ready');
    await settle();
    assert.equal(ex.disposed, false);
    call(ex, 0).succeed();
    await disposed;
    assert.equal(ex.disposed, true);
    assert.equal(await code(running), 'resolved');
    assert.equal(await code(ask(3)), 'model_not_ready');
  });

  it('hands a closed batch to a busy worker when it accepts a second one (depth 2)', async () => {
    const { ex, ask, time, reasons } = setup({ windowMs: 5 });
    ex.depth = 2;
    void ask(1);
    void ask(2);
    void ask(3);
    assert.equal(ex.calls.length, 1);
    time.advance(5); // window: [2, 3] goes to the worker while [1] still runs
    assert.deepEqual(FakeExecutor.ids(call(ex, 1)), [2, 3]);
    void ask(4); // both slots taken: waits
    assert.equal(ex.calls.length, 2);
    call(ex, 0).succeed();
    await settle();
    assert.equal(ex.calls.length, 2, 'the worker is still busy with [2, 3]: [4] keeps accumulating');
    call(ex, 1).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 2)), [4]);
    assert.deepEqual(reasons(), ['idle', 'window', 'idle']);
  });

  it('uses every worker before batching (concurrency 2)', async () => {
    const { ex, ask } = setup({}, 2);
    void ask(1);
    void ask(2);
    void ask(3);
    assert.deepEqual(
      ex.calls.map((c) => FakeExecutor.ids(c)),
      [[1], [2]],
    );
    call(ex, 1).succeed();
    await settle();
    assert.deepEqual(FakeExecutor.ids(call(ex, 2)), [3]);
  });
});
