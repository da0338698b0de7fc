import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../../lib/app';
import { testConfig } from '../support/config';
import type { Engine, BatchItemResult } from '../../lib/engine';
import { AppError } from '../../lib/errors/errors';
import type { ScoreResult } from '../../lib/scoring/scorer';
import { createJsonLogger } from '../../lib/platform/logger';
import { validEvent } from '../support/events';
import { tempModelDir } from './support/model-dir';

const isScore = (r: BatchItemResult | undefined): r is ScoreResult => r !== undefined && 'score' in r;

describe('Engine.scoreBatch and per-request timing (worker pool, cuda requested)', () => {
  let engine: Engine;
  let models: Awaited<ReturnType<typeof tempModelDir>>;
  const lines: string[] = [];

  before(async () => {
    models = await tempModelDir({ hidden: [16] });
    const config = testConfig({
      MODEL_DIR: models.dir,
      ORT_EXECUTION_PROVIDERS: 'cuda,cpu',
      INFERENCE_MODE: 'workers',
      INFERENCE_WORKERS: '1',
      REQUEST_DEADLINE_MS: '2000',
    });
    engine = await createEngine(config, { logger: createJsonLogger('info', (line) => lines.push(line)) });
    await engine.start();
  });
  after(async () => {
    await engine.dispose();
    await models.remove();
  });

  it('falls back to CPU without crashing, and says so in the log and in readiness', async () => {
    const r = await engine.readiness();
    assert.equal(r.ready, true);
    assert.ok(r.ready && /cuda/.test(r.fallbackReason ?? ''));
    assert.ok(r.ready && r.executionProviders.includes('cpu'));
    const warn = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['level'] === 'warn' && /fallback/.test(String(l['msg'])));
    assert.match(String(warn?.['fallbackReason']), /cuda/);
  });

  it('adds timing { queueMs, inferenceMs, batchSize } to a single score', async () => {
    const r = await engine.score(validEvent());
    assert.deepEqual(Object.keys(r.timing).sort(), ['batchSize', 'inferenceMs', 'queueMs']);
    assert.ok(r.timing.batchSize >= 1);
  });

  it('scores valid events in order and reports invalid ones per item, naming their fields', async () => {
    const body = {
      events: [
        validEvent({ transactionId: 'tx-a' }),
        validEvent({ transactionId: 'tx-bad', amount: -1, currency: 'XXX' }),
        validEvent({ transactionId: 'tx-b', amount: 9000 }),
        42,
      ],
    };
    const { results } = await engine.scoreBatch(body);
    assert.equal(results.length, 4);
    const [a, bad, b, junk] = results;
    assert.ok(isScore(a) && a.transactionId === 'tx-a' && a.timing.batchSize >= 2);
    assert.ok(isScore(b) && b.transactionId === 'tx-b');
    assert.ok(bad !== undefined && 'error' in bad);
    assert.equal(bad.transactionId, 'tx-bad');
    assert.equal(bad.error.status, 400);
    assert.deepEqual(bad.error.errors?.map((e) => e.path).sort(), ['events.1.amount', 'events.1.currency']);
    assert.ok(junk !== undefined && 'error' in junk && junk.transactionId === undefined);
    assert.equal((await engine.score(validEvent({ transactionId: 'tx-a' }))).score, a.score);
  });

  it('keeps the order of 256 events', async () => {
    const events = Array.from({ length: 256 }, (_, i) => validEvent({ transactionId: `tx-${i}`, amount: 1 + i * 37 }));
    const { results } = await engine.scoreBatch({ events });
    assert.deepEqual(
      results.map((r) => r.transactionId),
      events.map((e) => e['transactionId']),
    );
    assert.ok(results.every(isScore));
  });

  it('answers a batch with no valid event without running inference', async () => {
    const { results } = await engine.scoreBatch({ events: [{}, { transactionId: 'x' }] });
    assert.ok(results.every((r) => 'error' in r));
  });

  it('refuses more than BATCH_MAX_EVENTS events with 413, and malformed bodies with 400', async () => {
    const tooMany = await engine
      .scoreBatch({ events: Array.from({ length: 257 }, () => validEvent()) })
      .catch((e: unknown) => e);
    assert.ok(tooMany instanceof AppError);
    assert.equal(tooMany.status, 413);
    assert.deepEqual(
      tooMany.errors.map((e) => e.path),
      ['events'],
    );
    for (const [body, pathName] of [
      [{}, 'events'],
      [{ events: [] }, 'events'],
      [{ events: 'x' }, 'events'],
      [[], ''],
      [{ events: [validEvent()], extra: 1 }, 'extra'],
    ] as const) {
      const err = await engine.scoreBatch(body).catch((e: unknown) => e);
      assert.ok(err instanceof AppError && err.code === 'validation_failed', JSON.stringify(body));
      assert.ok(
        err.errors.some((e) => e.path === pathName),
        JSON.stringify(err.errors),
      );
    }
  });
});
