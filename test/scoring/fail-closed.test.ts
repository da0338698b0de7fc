import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MeterProvider, MetricReader, type DataPoint } from '@opentelemetry/sdk-metrics';
import { createEngine } from '../../lib/app';
import { InProcessBus } from '../../local/in-process-bus';
import { loadConfig } from '../../lib/config/config';
import type { BatchItemResult, Engine } from '../../lib/engine';
import { FEATURE_COUNT } from '../../lib/features/featurizer';
import { MODEL_OUTPUT_INVALID } from '../../lib/scoring/decision';
import type { ScoreResult } from '../../lib/scoring/scorer';
import { createJsonLogger } from '../../lib/platform/logger';
import { Telemetry } from '../../lib/telemetry/telemetry';
import { buildDenseModel } from '../../lib/training/onnx-writer';
import { validEvent } from '../support/events';
import { tempModelsDir, writeModel } from '../support/models';

class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * A real ONNX model with no output activation: `score = 0.1 · amount_log − 0.2`, where amount_log =
 * ln(amount + 1). Valid on the warm-up row (the manifest baseline, amount_log ≈ 3.9 → 0.19), but above 1
 * for large amounts (1e6 → 1.18) and below 0 for small ones (1 → −0.13): the model misbehaves on some
 * inputs only, which warm-up cannot catch.
 */
function unboundedModel(): Uint8Array {
  const weights = new Float32Array(FEATURE_COUNT);
  weights[0] = 0.1;
  return buildDenseModel({
    inputName: 'features',
    outputName: 'score',
    inputSize: FEATURE_COUNT,
    layers: [{ weights, bias: Float32Array.of(-0.2), activation: 'none' }],
    producer: 'test',
    docString: 'unbounded output',
  });
}

const isScore = (r: BatchItemResult | undefined): r is ScoreResult => r !== undefined && 'decision' in r;

describe('fail closed: a model output that is not a finite number in [0, 1] never becomes a decision', () => {
  let engine: Engine;
  let dir: string;
  const bus = new InProcessBus();
  const reader = new TestReader();
  const lines: string[] = [];

  before(async () => {
    dir = await tempModelsDir();
    await writeModel(dir, '1.0.0', unboundedModel());
    // the model's own fail-closed path, without a ruleset (its rules would add their reasons; see test/decisioning)
    const config = loadConfig({
      MODEL_DIR: dir,
      INFERENCE_MODE: 'inline',
      REQUEST_DEADLINE_MS: '5000',
      RULESET_NAME: 'none',
      DECISION_LOG_DIR: mkdtempSync(path.join(os.tmpdir(), 'fail-closed-decisions-')), // not the checkout's .data
    });
    const telemetry = await Telemetry.create({ meterProvider: new MeterProvider({ readers: [reader] }) });
    engine = await createEngine(config, {
      logger: createJsonLogger('info', (line) => lines.push(line)),
      telemetry,
      bus,
    });
    await engine.start();
  });
  after(() => engine.dispose());

  async function invalidCount(): Promise<number> {
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === 'scoring.invalid_score');
    return ((metric?.dataPoints ?? []) as DataPoint<number>[]).reduce((n, p) => n + p.value, 0);
  }

  it('answers review with reason model_output_invalid and no score, for a score above 1 and below 0', async () => {
    const before = await invalidCount();
    for (const amount of [1e6, 1]) {
      const r = await engine.score(validEvent({ transactionId: `tx-${amount}`, amount }));
      assert.equal(r.decision, 'review', `amount ${amount}`);
      assert.equal(r.score, null);
      assert.deepEqual(
        r.reasons.map((x) => x.code),
        [MODEL_OUTPUT_INVALID],
      );
    }
    assert.equal((await invalidCount()) - before, 2);
  });

  it('still scores inputs where the model is valid', async () => {
    const r = await engine.score(validEvent({ amount: 50 })); // ln(51)·0.1 − 0.2 ≈ 0.19
    assert.ok(r.score !== null && r.score > 0 && r.score < 1);
    assert.notEqual(r.reasons[0]?.code, MODEL_OUTPUT_INVALID);
  });

  it('marks only the invalid events of a batch, keeping the valid ones scored', async () => {
    const before = await invalidCount();
    const { results } = await engine.scoreBatch({
      events: [
        validEvent({ transactionId: 'b-ok', amount: 50 }),
        validEvent({ transactionId: 'b-high', amount: 5e8 }),
        validEvent({ transactionId: 'b-low', amount: 0.5 }),
      ],
    });
    const [ok, high, low] = results;
    assert.ok(isScore(ok) && isScore(high) && isScore(low));
    assert.ok(ok.score !== null);
    for (const r of [high, low]) {
      assert.equal(r.decision, 'review', r.transactionId);
      assert.equal(r.score, null);
      assert.equal(r.reasons[0]?.code, MODEL_OUTPUT_INVALID);
    }
    assert.equal((await invalidCount()) - before, 2);
  });

  it('publishes review (not approve) on the Service Bus path', async () => {
    const outcome = await engine.processMessage(JSON.stringify(validEvent({ transactionId: 'q-high', amount: 1e7 })), {
      messageId: 'q-high',
      deliveryCount: 1,
    });
    assert.equal(outcome.kind, 'scored');
    assert.ok(outcome.kind === 'scored');
    assert.equal(outcome.result.decision, 'review');
    assert.equal(outcome.result.score, null);
    const published = bus
      .messages(engine.config.serviceBus.resultsTopic)
      .map((m) => (typeof m.body === 'string' ? JSON.parse(m.body) : m.body) as Record<string, unknown>)
      .find((b) => b['transactionId'] === 'q-high');
    assert.equal(published?.['decision'], 'review');
  });

  it('logs each invalid output with the model and what was wrong, never payment data', () => {
    const logged = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => /model output invalid/.test(String(l['msg'])));
    assert.ok(logged.length >= 5, `expected the invalid outputs to be logged, got ${logged.length}`);
    for (const l of logged) {
      assert.equal(l['model'], 'fraud');
      assert.equal(l['version'], '1.0.0');
      assert.ok(['out_of_range', 'nan', 'infinite', 'missing'].includes(String(l['kind'])));
      const text = JSON.stringify(l);
      for (const secret of ['tx-', 'b-high', 'q-high', 'user-42', 'm-991', '1000000', 'dev-abc'])
        assert.ok(!text.includes(secret), `log line leaks ${secret}: ${text}`);
    }
  });
});
