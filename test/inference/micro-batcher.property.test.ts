import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { AppError } from '../../lib/errors/errors';
import type { RunResult } from '../../lib/inference/backend';
import { MicroBatcher } from '../../lib/inference/micro-batcher';
import { FakeExecutor, row } from './support/fake-executor';
import { FakeTimers, settle } from '../support/clock';

type Step =
  | { kind: 'ask'; rows: number; deadlineMs: number | null }
  | { kind: 'advance'; ms: number }
  | { kind: 'complete'; which: number; ok: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('ask' as const),
    rows: fc.integer({ min: 1, max: 7 }),
    deadlineMs: fc.option(fc.integer({ min: 1, max: 12 })),
  }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ kind: fc.constant('complete' as const), which: fc.nat(), ok: fc.boolean() }),
);

describe('MicroBatcher (property)', () => {
  it('batching then splitting returns each caller its own rows, every request settles, the executor is never overfilled', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          concurrency: fc.integer({ min: 1, max: 3 }),
          depth: fc.integer({ min: 1, max: 2 }),
          maxBatchSize: fc.integer({ min: 1, max: 8 }),
          windowMs: fc.integer({ min: 0, max: 6 }),
          queueMax: fc.integer({ min: 1, max: 24 }),
        }),
        fc.array(step, { minLength: 1, maxLength: 40 }),
        async (opts, steps) => {
          const time = new FakeTimers();
          const ex = new FakeExecutor(opts.concurrency);
          ex.depth = opts.depth;
          const b = new MicroBatcher({ executor: ex, options: opts, now: time.now, scheduler: time });
          let nextId = 1;
          const asked: { ids: number[]; outcome: Promise<RunResult | AppError>; settled: boolean }[] = [];
          for (const s of steps) {
            if (s.kind === 'ask') {
              const ids = Array.from({ length: s.rows }, () => nextId++);
              const input = Float32Array.from(ids.flatMap((id) => [...row(id)]));
              const p = b.run(input, s.rows, s.deadlineMs === null ? {} : { deadline: time.now() + s.deadlineMs });
              const entry = { ids, outcome: p.catch((e: AppError) => e), settled: false };
              void entry.outcome.then(() => (entry.settled = true));
              asked.push(entry);
            } else if (s.kind === 'advance') {
              time.advance(s.ms);
            } else {
              const open = ex.open;
              const c = open[s.which % Math.max(1, open.length)];
              if (c !== undefined) {
                if (s.ok) c.succeed();
                else c.fail(Object.assign(new Error('boom'), { transient: true }));
              }
            }
            await settle();
          }
          // Drain: finish everything still running, firing timers as needed.
          for (let guard = 0; guard < 500 && (ex.open.length > 0 || b.stats.queuedRows > 0); guard++) {
            for (const c of ex.open) c.succeed();
            time.advance(1);
            await settle();
          }
          assert.ok(
            asked.every((a) => a.settled),
            'every request settled',
          );
          for (const { ids, outcome } of asked) {
            const r = await outcome;
            if ('scores' in r) {
              assert.deepEqual(
                [...r.scores],
                ids.map((id) => Math.fround(id / 1000)),
              );
              assert.ok(r.timing.batchSize >= 1 && r.timing.batchSize <= opts.maxBatchSize);
            } else {
              assert.ok(['overloaded', 'deadline_exceeded', 'internal', 'inference_failed'].includes(r.code), r.code);
            }
          }
          for (const c of ex.calls) assert.ok(c.rows <= opts.maxBatchSize);
          assert.ok(
            ex.maxOpen <= opts.concurrency * opts.depth,
            'never more batches handed over than the executor accepts',
          );
          assert.equal(b.stats.queuedRows, 0);
        },
      ),
      { numRuns: 150 },
    );
  });
});
