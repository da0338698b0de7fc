/**
 * Drift: bins and PSI (pure, with fast-check), and the live monitor exported through telemetry: payments like
 * the training data keep PSI low; shifted payments drive it above 0.2 on the shifted features and the score, and
 * the `learning.drift.psi` gauge (read with an in-memory metric reader) shows it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import fc from 'fast-check';
import { testConfig } from '../support/config';
import { FEATURE_COUNT, featurize } from '../../lib/features/featurizer';
import { binOf, binsOf, psi, PSI_ALERT } from '../../lib/learning/drift-bins';
import { createLearning } from '../../lib/learning/create-learning';
import { manifestSchema } from '../../lib/models/manifest';
import type { ScoreResult } from '../../lib/scoring/scorer';
import { Telemetry } from '../../lib/telemetry/telemetry';
import { generatePayments } from '../../lib/training/synthetic-payments';
import { collectMetrics, TestReader } from '../telemetry/support';

const MANIFEST = manifestSchema.parse(
  JSON.parse(readFileSync(path.resolve(__dirname, '../../../models/fraud/1.0.0.json'), 'utf8')),
);

describe('drift bins and PSI', () => {
  it('binOf puts every value in the bin its edges bound', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { maxLength: 12 }),
        fc.double({ min: -2e6, max: 2e6, noNaN: true }),
        (raw, x) => {
          const edges = [...raw].sort((a, b) => a - b);
          const b = binOf(edges, x);
          assert.ok(b === 0 || x >= (edges[b - 1] as number));
          assert.ok(b === edges.length || x < (edges[b] as number));
        },
      ),
    );
  });

  it('binsOf shares sum to 1 and PSI of a sample against its own bins is 0', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 1, maxLength: 300 }), (v) => {
        const b = binsOf(v);
        assert.equal(b.expected.length, b.edges.length + 1);
        assert.ok(Math.abs(b.expected.reduce((a, x) => a + x, 0) - 1) < 1e-4);
        const counts = new Array<number>(b.expected.length).fill(0);
        for (const x of v) counts[binOf(b.edges, x)]! += 1;
        assert.ok(psi(b.expected, counts, v.length) < 1e-3);
      }),
    );
  });

  it('a rare 0/1 flag gets its own bin', () => {
    const v = Array.from({ length: 1000 }, (_x, i) => (i % 50 === 0 ? 1 : 0));
    assert.deepEqual(binsOf(v), { edges: [0.5], expected: [0.98, 0.02] });
  });
});

describe('drift monitor exported as metrics', () => {
  it('shows PSI above 0.2 for shifted inputs, and below it for inputs like the training data', async () => {
    const reader = new TestReader();
    const telemetry = await Telemetry.create({ meterProvider: new MeterProvider({ readers: [reader] }) });
    const config = testConfig({ DECISION_LOG_ENABLED: 'false', DRIFT_WINDOW: '2000' });
    const learning = await createLearning(config, {
      logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
      metrics: telemetry.learning,
    });
    const decided = learning.scorerEvents().decided;
    assert.ok(decided !== undefined);
    const feed = (shift: boolean, seed: number): void => {
      for (const s of generatePayments({ seed, count: 2000 })) {
        const event = shift ? { ...s.event, amount: s.event.amount * 40, channel: 'web' as const } : s.event;
        const row = featurize(event, s.context, new Float32Array(FEATURE_COUNT));
        const score = shift ? 0.5 : 0.004; // shifted traffic also scores high
        const result = { score, model: { name: 'fraud', version: '1.0.0' } } as unknown as ScoreResult;
        decided({ event, row, velocity: s.context.velocity, manifest: MANIFEST, result });
      }
    };
    const psiBySeries = async (): Promise<Map<string, number>> => {
      const m = await collectMetrics(reader);
      const points = m.get('learning.drift.psi')?.points ?? [];
      return new Map(points.map((p) => [String(p.attributes['series']), p.value as number]));
    };

    feed(false, 7);
    const calm = await psiBySeries();
    assert.equal(calm.size, FEATURE_COUNT + 1, 'one series per feature and the score');
    for (const f of ['amount_log', 'amount_vs_usual', 'channel_web', 'velocity_1m'])
      assert.ok((calm.get(f) as number) < 0.05, `${f} PSI ${calm.get(f)} on training-like inputs`);

    feed(true, 8); // the whole window is now shifted
    const shifted = await psiBySeries();
    for (const f of ['amount_log', 'amount_vs_usual', 'channel_web', 'score'])
      assert.ok((shifted.get(f) as number) > PSI_ALERT, `${f} PSI ${shifted.get(f)} > 0.2 after the shift`);
    assert.ok((shifted.get('velocity_1m') as number) < 0.05, 'an unshifted feature stays low');
    console.log(`PSI after the shift: ${[...shifted].map(([k, v]) => `${k}=${v.toFixed(3)}`).join(' ')}`);
    await learning.dispose();
  });
});
