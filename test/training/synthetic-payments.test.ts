import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FEATURE_COUNT, FEATURE_NAMES, localHour } from '../../lib/features/featurizer';
import { paymentEventSchema } from '../../lib/domain/payment-event';
import { featurizeSamples, generatePayments, SCENARIO_WEIGHTS } from '../../lib/training/synthetic-payments';
import { Prng } from '../../lib/training/prng';

describe('Prng', () => {
  it('is reproducible and uniform-ish in [0, 1)', () => {
    const a = new Prng(123);
    const b = new Prng(123);
    let sum = 0;
    for (let i = 0; i < 10_000; i++) {
      const v = a.next();
      assert.equal(v, b.next());
      assert.ok(v >= 0 && v < 1);
      sum += v;
    }
    assert.ok(Math.abs(sum / 10_000 - 0.5) < 0.02);
    assert.notEqual(new Prng(1).next(), new Prng(2).next());
  });
});

describe('generatePayments', () => {
  const samples = generatePayments({ seed: 9, count: 20_000 });

  it('never uses Math.random and is reproducible', (t) => {
    t.mock.method(Math, 'random', () => {
      throw new Error('Math.random used');
    });
    assert.deepEqual(generatePayments({ seed: 9, count: 500 }), samples.slice(0, 500));
    assert.notDeepEqual(generatePayments({ seed: 10, count: 500 }), samples.slice(0, 500));
  });

  it('produces events that pass the payment event schema', () => {
    for (const s of samples.slice(0, 3000)) {
      const r = paymentEventSchema.safeParse(s.event);
      assert.ok(r.success, JSON.stringify(s.event));
    }
  });

  it('has a 3–5 % fraud rate, ~15 % users without a profile and every scenario', () => {
    const fraud = samples.filter((s) => s.fraud).length / samples.length;
    assert.ok(fraud >= 0.03 && fraud <= 0.05, `fraud rate ${fraud}`);
    const noProfile = samples.filter((s) => s.context.profile === null).length / samples.length;
    assert.ok(noProfile > 0.12 && noProfile < 0.18, `no-profile share ${noProfile}`);
    const seen = new Set(samples.map((s) => s.scenario));
    for (const [scenario] of SCENARIO_WEIGHTS) assert.ok(seen.has(scenario), scenario);
  });

  it('labels are noisy: attacks are not always fraud and legit scenarios are sometimes fraud', () => {
    const rate = (pred: (s: (typeof samples)[number]) => boolean): number => {
      const group = samples.filter(pred);
      return group.filter((s) => s.fraud).length / group.length;
    };
    const attack = rate((s) =>
      ['account_takeover', 'card_testing', 'stolen_card_abroad', 'new_account_fraud'].includes(s.scenario),
    );
    const normal = rate((s) => s.scenario === 'normal');
    assert.ok(attack > 0.3 && attack < 0.9, `attack fraud rate ${attack}`);
    assert.ok(normal > 0 && normal < 0.01, `normal fraud rate ${normal}`);
  });

  it('has consistent velocity, ids and accounts created before the payment', () => {
    const ids = new Set<string>();
    for (const { event, context } of samples) {
      const v = context.velocity;
      assert.ok(v.count1m <= v.count1h && v.count1h <= v.count24h);
      assert.ok(v.sum24h >= 0 && (v.count24h > 0 || v.sum24h === 0));
      assert.ok(v.distinctCountries24h <= v.count24h);
      if (context.profile !== null)
        assert.ok(Date.parse(context.profile.accountCreatedAt) <= Date.parse(event.timestamp));
      assert.ok(localHour(event.timestamp) >= 0);
      ids.add(event.transactionId);
    }
    assert.equal(ids.size, samples.length);
  });

  it('makes attack patterns more frequent among frauds', () => {
    const data = featurizeSamples(samples);
    assert.equal(data.x.length, samples.length * FEATURE_COUNT);
    const col = (name: string): number => FEATURE_NAMES.indexOf(name);
    const mean = (name: string, label: number): number => {
      let s = 0;
      let c = 0;
      for (let i = 0; i < data.n; i++) {
        if (data.y[i] !== label) continue;
        s += data.x[i * FEATURE_COUNT + col(name)] as number;
        c++;
      }
      return s / c;
    };
    for (const f of [
      'amount_vs_usual',
      'velocity_1m',
      'new_device',
      'ip_country_mismatch',
      'foreign_country',
      'risky_mcc',
      'night_hour',
    ]) {
      assert.ok(mean(f, 1) > mean(f, 0), f);
    }
    assert.ok(mean('account_age_log', 1) < mean('account_age_log', 0));
    assert.ok(data.x.every(Number.isFinite));
  });
});
