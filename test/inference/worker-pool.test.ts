import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { randomModelBytes } from '../../lib/training/random-model';
import type { AppError } from '../../lib/errors/errors';
import { FEATURE_COUNT } from '../../lib/features/featurizer';
import { MicroBatcher } from '../../lib/inference/micro-batcher';
import { createSession } from '../../lib/inference/ort-session';
import { WorkerPool, type WorkerPoolEvents } from '../../lib/inference/worker-pool';
import { FAULT_EXIT_CODE } from '../../lib/inference/worker-protocol';
import { within } from '../support/eventually';
import { contractModel, rows } from './support/backend-contract';

const session = { executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' } as const;
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: AppError) => e.code,
  );

/** Pool events as an EventEmitter-like recorder, so tests can await the next one. */
function recorder() {
  const seen: { type: keyof WorkerPoolEvents; e: unknown }[] = [];
  const waiters: { type: keyof WorkerPoolEvents; resolve: (e: unknown) => void }[] = [];
  const push = (type: keyof WorkerPoolEvents) => (e: unknown) => {
    seen.push({ type, e });
    for (const w of waiters.splice(0)) {
      if (w.type === type) w.resolve(e);
      else waiters.push(w);
    }
  };
  const on: Partial<WorkerPoolEvents> = {
    workerReady: push('workerReady'),
    workerExit: push('workerExit'),
    respawnFailed: push('respawnFailed'),
  };
  const next = (type: keyof WorkerPoolEvents) => new Promise<unknown>((resolve) => waiters.push({ type, resolve }));
  return { seen, on, next };
}

describe('WorkerPool', () => {
  it('hands every worker a batch, then a second one to wait inside it (depth 2), then queues', async () => {
    const pool = await WorkerPool.create(contractModel(), { size: 2, session });
    try {
      const runs = [2, 3, 1, 2, 1].map((n, i) => pool.run(rows(n, i), n));
      assert.deepEqual(pool.stats, { live: 2, busy: 2, inWorkers: 4, queued: 1, restarts: 0 });
      const results = await Promise.all(runs);
      assert.deepEqual(
        results.map((r) => r.scores.length),
        [2, 3, 1, 2, 1],
      );
    } finally {
      await pool.dispose();
    }
  });

  it('with depth 1, runs one batch per worker and queues the rest in the pool', async () => {
    const pool = await WorkerPool.create(contractModel(), { size: 2, session, depth: 1 });
    try {
      const runs = [1, 2, 3].map((n) => pool.run(rows(n), n));
      assert.deepEqual(pool.stats, { live: 2, busy: 2, inWorkers: 2, queued: 1, restarts: 0 });
      assert.equal((await Promise.all(runs)).length, 3);
    } finally {
      await pool.dispose();
    }
  });

  it('replaces a worker that crashes; its in-flight run fails with inference_failed, never hangs; later runs succeed', async () => {
    const ev = recorder();
    const pool = await WorkerPool.create(contractModel(), { size: 1, session, on: ev.on });
    try {
      const replaced = ev.next('workerReady');
      assert.ok(pool.injectFault(0));
      const err = await pool.run(rows(1), 1).then(
        () => undefined,
        (e: AppError) => e,
      );
      assert.equal(err?.code, 'inference_failed');
      assert.equal(err?.transient, true);
      const exit = ev.seen.find((s) => s.type === 'workerExit')?.e as { exitCode: number; failedRuns: number };
      assert.deepEqual([exit.exitCode, exit.failedRuns], [FAULT_EXIT_CODE, 1]);
      await within(replaced, 'workerReady from the worker that replaces the crashed one');
      assert.equal((await pool.run(rows(2), 2)).scores.length, 2);
      assert.equal(pool.stats.restarts, 1);
      assert.equal(pool.stats.live, 1);
    } finally {
      await pool.dispose();
    }
  });

  it('a run waiting inside a worker that crashes never started: it is re-run on the replacement', async () => {
    const pool = await WorkerPool.create(contractModel(), { size: 1, session, depth: 2 });
    try {
      pool.injectFault(0);
      const crashed = outcome(pool.run(rows(1), 1));
      const waiting = pool.run(rows(2, 5), 2);
      assert.equal(pool.stats.inWorkers, 2);
      assert.equal(await crashed, 'inference_failed');
      assert.equal((await waiting).scores.length, 2);
      assert.equal(pool.stats.restarts, 1);
    } finally {
      await pool.dispose();
    }
  });

  it('behind the micro-batcher: the crashed batch fails, queued requests run on the replacement', async () => {
    const pool = await WorkerPool.create(contractModel(), { size: 1, session });
    const batcher = new MicroBatcher({ executor: pool, options: { maxBatchSize: 8, windowMs: 1, queueMax: 64 } });
    try {
      pool.injectFault(0);
      const first = outcome(batcher.run(rows(1), 1));
      const later = [outcome(batcher.run(rows(1, 2), 1)), outcome(batcher.run(rows(2, 3), 2))];
      assert.equal(await first, 'inference_failed');
      assert.deepEqual(await Promise.all(later), ['resolved', 'resolved']);
    } finally {
      await batcher.dispose();
    }
  });

  it('replaces a worker whose run hangs past the run timeout, failing that run cleanly', async () => {
    const ev = recorder();
    const workerScript = path.join(__dirname, 'support', 'hanging-worker.js');
    const pool = await WorkerPool.create(contractModel(), {
      size: 1,
      session,
      runTimeoutMs: 50,
      workerScript,
      on: ev.on,
    });
    try {
      const replaced = ev.next('workerReady');
      assert.equal(await outcome(pool.run(rows(1), 1)), 'inference_failed');
      await within(replaced, 'workerReady from the worker that replaces the hung one');
      assert.equal(pool.stats.restarts, 1);
      assert.match(String((ev.seen.find((s) => s.type === 'workerExit')?.e as { reason: string }).reason), /timed out/);
    } finally {
      await pool.dispose();
    }
  });

  it('fails to start with model_invalid when the model cannot be loaded', async () => {
    const bad = { ...contractModel(), bytes: new Uint8Array([1, 2, 3, 4]) };
    const err = await WorkerPool.create(bad, { size: 2, session }).then(
      () => undefined,
      (e: AppError) => e,
    );
    assert.equal(err?.code, 'model_invalid');
  });

  it('on dispose: finishes runs handed to workers, rejects runs still queued as retryable, then refuses new runs', async () => {
    const pool = await WorkerPool.create(contractModel(), { size: 1, session, depth: 2 });
    const handedOver = [outcome(pool.run(rows(1), 1)), outcome(pool.run(rows(1), 1))];
    const queued = outcome(pool.run(rows(1), 1));
    await pool.dispose();
    assert.deepEqual([...(await Promise.all(handedOver)), await queued], ['resolved', 'resolved', 'model_not_ready']);
    assert.equal(await outcome(pool.run(rows(1), 1)), 'model_not_ready');
  });
});

describe('execution provider fallback', () => {
  it('createSession falls back to CPU when CUDA is unavailable, and says why', async () => {
    const r = await createSession(randomModelBytes([4]), { ...session, executionProviders: ['cuda', 'cpu'] });
    try {
      assert.deepEqual([...r.executionProviders], ['cpu']);
      assert.match(r.fallbackReason ?? '', /cuda.*unavailable.*using cpu/);
    } finally {
      await r.session.release();
    }
  });

  it('a worker pool asked for cuda,cpu starts on CPU, reports the fallback, and scores', async () => {
    const pool = await WorkerPool.create(contractModel(), {
      size: 1,
      session: { ...session, executionProviders: ['cuda', 'cpu'] },
    });
    try {
      assert.deepEqual([...pool.info.executionProviders], ['cpu']);
      assert.match(pool.info.fallbackReason ?? '', /cuda/);
      assert.equal((await pool.run(rows(1), 1)).scores.length, 1);
      assert.equal(FEATURE_COUNT, pool.info.inputWidth);
    } finally {
      await pool.dispose();
    }
  });
});
