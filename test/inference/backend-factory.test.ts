import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  autoWorkerCount,
  batchCap,
  INLINE_MAX_MODEL_BYTES,
  isGpuProvider,
  resolveMode,
} from '../../lib/inference/backend-factory';
import { batchDeadlineMs, resolveDeadlineMs } from '../../lib/inference/deadline';
import { AppError } from '../../lib/errors/errors';
import { testConfig } from '../support/config';

describe('backend factory choices', () => {
  it('auto runs tiny models inline and the rest in workers; explicit modes win', () => {
    assert.equal(resolveMode('auto', 748), 'inline');
    assert.equal(resolveMode('auto', INLINE_MAX_MODEL_BYTES), 'inline');
    assert.equal(resolveMode('auto', INLINE_MAX_MODEL_BYTES + 1), 'workers');
    assert.equal(resolveMode('workers', 748), 'workers');
    assert.equal(resolveMode('inline', 34_000_000), 'inline');
  });

  it('sizes the pool to the cores left after the event loop, divided by intra-op threads, at least 1', () => {
    assert.deepEqual(
      [
        autoWorkerCount(1, 1),
        autoWorkerCount(2, 1),
        autoWorkerCount(8, 1),
        autoWorkerCount(8, 2),
        autoWorkerCount(4, 0),
      ],
      [1, 1, 7, 3, 3],
    );
  });

  it('caps batches with BATCH_MAX_SIZE_GPU only when a GPU provider is in use', () => {
    assert.equal(isGpuProvider(['cuda', 'cpu']), true);
    assert.equal(isGpuProvider(['cpu']), false);
    assert.equal(isGpuProvider([]), false);
  });

  it('BATCH_MAX_SIZE_GPU replaces BATCH_MAX_SIZE on a GPU, larger or smaller (T4 48 over 64 and 32)', () => {
    assert.equal(batchCap({ batchMaxSize: 32, batchMaxSizeGpu: 48 }, true), 48);
    assert.equal(batchCap({ batchMaxSize: 64, batchMaxSizeGpu: 32 }, true), 32);
    assert.equal(batchCap({ batchMaxSize: 32, batchMaxSizeGpu: 48 }, false), 32);
    const c = testConfig({ BATCH_MAX_SIZE: '64', BATCH_MAX_SIZE_GPU: '48' }).inference;
    assert.equal(batchCap(c, isGpuProvider(['cuda', 'cpu'])), 48);
    assert.equal(batchCap(c, isGpuProvider(['cpu'])), 64);
  });
});

describe('x-deadline-ms', () => {
  const limits = { deadlineMs: 50, deadlineMaxMs: 2000 };
  it('defaults, accepts, and clamps to the maximum', () => {
    assert.equal(resolveDeadlineMs(null, limits), 50);
    assert.equal(resolveDeadlineMs(' ', limits), 50);
    assert.equal(resolveDeadlineMs('120', limits), 120);
    assert.equal(resolveDeadlineMs('2.5', limits), 2.5);
    assert.equal(resolveDeadlineMs('999999', limits), 2000);
  });

  it('defaults to 1000 ms (what a caller waits), capped by REQUEST_DEADLINE_MAX_MS, never below the default', () => {
    const d = testConfig({}).inference;
    assert.deepEqual([d.deadlineMs, d.deadlineMaxMs], [1000, 2000]);
    assert.equal(resolveDeadlineMs(null, d), 1000);
    assert.equal(resolveDeadlineMs('5000', d), 2000, 'x-deadline-ms is capped');
    // a batch's default deadline still grows per valid event, up to the cap
    assert.equal(batchDeadlineMs(1, d), 1000);
    assert.equal(batchDeadlineMs(101, d), 1000 + 100 * d.batchDeadlinePerEventMs);
    assert.equal(batchDeadlineMs(100_000, d), 2000);
    // a maximum set below the default is raised to it: the default is always allowed
    const low = testConfig({ REQUEST_DEADLINE_MS: '3000', REQUEST_DEADLINE_MAX_MS: '1500' }).inference;
    assert.deepEqual([low.deadlineMs, low.deadlineMaxMs], [3000, 3000]);
    assert.equal(resolveDeadlineMs('9000', low), 3000);
  });

  it('rejects anything but a positive number, naming the header', () => {
    for (const bad of ['0', '-5', 'soon', 'NaN', 'Infinity']) {
      const err = (() => {
        try {
          resolveDeadlineMs(bad, limits);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      assert.ok(err instanceof AppError && err.code === 'validation_failed', bad);
      assert.deepEqual(
        err.errors.map((e) => e.path),
        ['headers.x-deadline-ms'],
      );
    }
  });
});
