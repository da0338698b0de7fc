import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { FEATURE_COUNT, FEATURE_NAMES } from '../../lib/features/featurizer';
import { manifestSchema } from '../../lib/models/manifest';
import { predictLogistic } from '../../lib/training/train';
import { scoreWithOnnx, type TrainedFraudModel } from '../../lib/training/train-fraud-model';
import { parseCli } from '../../lib/commands/train-command';
import { serializeManifest, trainFraudModel } from '../../lib/training/train-fraud-model';
import { Prng } from '../../lib/training/prng';

/** Small enough to train in ~1 s, large enough for a stable hold-out AUC (~160 hold-out frauds). */
const SAMPLES = 20_000;

describe('trainFraudModel', () => {
  let first: TrainedFraudModel;
  let epochLines = 0;
  before(async () => {
    first = await trainFraudModel({ seed: 42, samples: SAMPLES, epochs: 8, onEpoch: () => void epochLines++ });
  });

  it('is deterministic: same seed → byte-identical ONNX and manifest; other seed → different bytes', async () => {
    const again = await trainFraudModel({ seed: 42, samples: SAMPLES, epochs: 8 });
    assert.ok(Buffer.from(again.onnx).equals(Buffer.from(first.onnx)));
    assert.equal(serializeManifest(again.manifest), serializeManifest(first.manifest));
    const other = await trainFraudModel({ seed: 43, samples: SAMPLES, epochs: 8 });
    assert.ok(!Buffer.from(other.onnx).equals(Buffer.from(first.onnx)));
    assert.notEqual(serializeManifest(other.manifest), serializeManifest(first.manifest));
    assert.equal(epochLines, 8);
  });

  it('reaches a hold-out ROC AUC ≥ 0.90 (but not 1)', () => {
    const auc = first.manifest.metrics?.rocAuc ?? 0;
    assert.ok(auc >= 0.9 && auc < 0.995, `AUC ${auc}`);
    assert.equal(first.manifest.metrics?.holdoutSize, SAMPLES * 0.2);
  });

  it('writes a manifest that parses, lists FEATURE_NAMES and records a matching sha256', async () => {
    const text = serializeManifest(first.manifest);
    const parsed = manifestSchema.parse(JSON.parse(text));
    assert.deepEqual(parsed, first.manifest);
    assert.deepEqual(
      parsed.features.map((f) => f.name),
      [...FEATURE_NAMES],
    );
    assert.deepEqual(parsed.input, { name: 'features', shape: [-1, FEATURE_COUNT], dtype: 'float32' });
    assert.deepEqual(parsed.output, { name: 'score', shape: [-1, 1], dtype: 'float32' });
    assert.equal(parsed.createdAt, undefined);
    const { createHash } = await import('node:crypto');
    assert.equal(parsed.sha256, createHash('sha256').update(first.onnx).digest('hex'));
    assert.ok(parsed.thresholds.review < parsed.thresholds.decline);
    for (const k of [
      'precisionAtReview',
      'recallAtReview',
      'precisionAtDecline',
      'recallAtDecline',
      'fraudRate',
      'holdoutPositives',
    ]) {
      assert.equal(typeof parsed.metrics?.[k], 'number', k);
    }
  });

  for (const batch of [1, 7]) {
    it(`ONNX scores match the TypeScript model within 1e-5 (batch ${batch})`, async () => {
      const rng = new Prng(batch);
      const golden = first.manifest.golden?.inputs ?? [];
      // Golden rows plus perturbed copies, to also cover inputs the model was not evaluated on.
      const x = Float32Array.from({ length: batch * FEATURE_COUNT }, (_v, k) => {
        const row = golden[Math.floor(k / FEATURE_COUNT) % golden.length] ?? [];
        return (row[k % FEATURE_COUNT] ?? 0) + rng.normal(0, 0.5);
      });
      const onnx = await scoreWithOnnx(first.onnx, x, batch);
      const ts = predictLogistic(first.model, x, batch);
      assert.equal(onnx.length, batch);
      for (let i = 0; i < batch; i++) assert.ok(Math.abs((onnx[i] as number) - (ts[i] as number)) <= 1e-5, `row ${i}`);
    });
  }

  it('golden scores reproduce and the linear explanation sums to the logit', async () => {
    const golden = first.manifest.golden;
    const expl = first.manifest.explanation;
    assert.ok(golden !== undefined && expl !== undefined);
    assert.equal(golden.inputs.length, 32);
    assert.ok(
      golden.scores.some((s) => s > first.manifest.thresholds.review),
      'golden rows include high scores',
    );
    const scores = await scoreWithOnnx(first.onnx, Float32Array.from(golden.inputs.flat()), golden.inputs.length);
    assert.deepEqual(Array.from(scores), golden.scores);
    golden.inputs.forEach((row, r) => {
      const logit = row.reduce(
        (z, v, i) => z + (expl.coefficients[i] as number) * (v - (expl.baseline[i] as number)),
        first.model.bias,
      );
      assert.ok(Math.abs(1 / (1 + Math.exp(-logit)) - (golden.scores[r] as number)) <= 1e-5);
    });
  });
});

describe('train-model CLI', () => {
  it('parses defaults and options', () => {
    const none = { dataset: undefined, current: undefined, signals: undefined };
    assert.deepEqual(parseCli([]), {
      ...{ seed: 42, samples: 200_000, out: 'models/fraud', version: '1.0.0', epochs: 20 },
      ...none,
      versionGiven: false,
    });
    assert.deepEqual(parseCli(['--seed', '7', '--samples', '5000', '--out', '/tmp/x', '--version', '2.1.0']), {
      ...{ seed: 7, samples: 5000, out: '/tmp/x', version: '2.1.0', epochs: 20 },
      ...none,
      versionGiven: true,
    });
    assert.deepEqual(parseCli(['--dataset', 'd.jsonl', '--current', 'm.json']), {
      ...{ seed: 42, samples: 200_000, out: 'models/fraud', version: '1.0.0', epochs: 20 },
      ...{ dataset: 'd.jsonl', current: 'm.json', signals: undefined },
      versionGiven: false,
    });
    assert.equal(parseCli(['--dataset', 'd.jsonl', '--signals', 's.json']).signals, 's.json');
    assert.throws(() => parseCli(['--seed', 'abc']), /--seed/);
    assert.throws(() => parseCli(['--version', 'v1']), /--version/);
    assert.throws(() => parseCli(['--bogus', '1']));
  });
});
