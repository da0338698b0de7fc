/**
 * The pipeline's signals stage: the version of a user, its aggregates (read beside the context; zeros and a
 * `degraded` event when the store is missing, fails or is slow), the signals row and the projections.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { NO_HISTORY } from '../../lib/domain/user-context';
import { FEATURE_NAMES } from '../../lib/features/featurizer';
import type { AggregatePlan, AggregateInput, AggregateStore } from '../../lib/signals/aggregate-store';
import { compileSignals } from '../../lib/signals/compile-signals';
import { ServedSignals } from '../../lib/signals/signals-serving';
import { SignalsShadow } from '../../lib/signals/signals-shadow';
import { SignalsStage, type PaymentAggregates } from '../../lib/scoring/signals-stage';
import type { ModelManifest } from '../../lib/models/manifest';
import { CARD_USERS, signalsDoc } from '../signals/support';
import { validEvent } from '../support/events';

const withCard = compileSignals(signalsDoc('1.1.0', { aggregates: [CARD_USERS] }));
const event = parsePaymentEvent(validEvent({ transactionId: 'tx-s-1', cardFingerprint: 'tok_1' }));

/** A store that answers `values` (or fails, or never answers), counting its calls. */
function store(answer: 'fail' | 'never' | number[]): AggregateStore & { calls: number } {
  const s = {
    calls: 0,
    record(_plan: AggregatePlan, _input: AggregateInput): Promise<Float64Array> {
      s.calls++;
      if (answer === 'fail') return Promise.reject(new Error('connection lost'));
      if (answer === 'never') return new Promise<Float64Array>(() => undefined);
      return Promise.resolve(Float64Array.from(answer));
    },
  };
  return s;
}

function stage(s: AggregateStore | undefined, reasons: string[] = []): SignalsStage {
  return new SignalsStage({
    source: { current: new ServedSignals(withCard) },
    store: () => s,
    timeoutMs: 20,
    now: () => 1_000_000,
    degraded: (e) => reasons.push(e.reason),
  });
}

describe('signals stage', () => {
  it('reads the aggregates and computes the row: aggregates first, then the features', async () => {
    const a = await stage(store([2])).aggregates(event, undefined);
    assert.deepEqual([a.degraded, Array.from(a.aggregates)], [false, [2]]);
    const row = stage(store([2])).row(event, NO_HISTORY, a);
    assert.equal(row.length, withCard.names.length);
    assert.equal(row[0], 2, 'card_users_1h');
  });

  it('degrades to zeros, naming why: no store, a failure, a store slower than the budget', async () => {
    const reasons: string[] = [];
    for (const s of [undefined, store('fail'), store('never')]) {
      const a: PaymentAggregates = await stage(s, reasons).aggregates(event, undefined);
      assert.deepEqual([a.degraded, Array.from(a.aggregates)], [true, [0]]);
    }
    assert.deepEqual(reasons, ['unavailable', 'error', 'timeout']);
  });

  it('asks no store when the serving version has no aggregates', async () => {
    const s = store([1]);
    const shipped = new SignalsStage({
      source: { current: new ServedSignals(compileSignals(signalsDoc('1.0.0'))) },
      store: () => s,
      timeoutMs: 20,
    });
    const a = await shipped.aggregates(event, undefined);
    assert.deepEqual([a.degraded, a.aggregates.length, s.calls], [false, 0, 0]);
  });

  it('projects the row onto each model version’s own feature list, compiled once per pair', () => {
    const st = stage(store([3]));
    const a: PaymentAggregates = { signals: withCard, aggregates: Float64Array.from([3]), degraded: false };
    const row = st.row(event, NO_HISTORY, a);
    const shipped = { features: FEATURE_NAMES.map((name) => ({ name, definition: '' })) } as unknown as ModelManifest;
    const wider = {
      features: [{ name: 'card_users_1h', definition: '' }, ...shipped.features],
    } as unknown as ModelManifest;
    const p = st.projection(withCard, shipped);
    assert.equal(st.projection(withCard, shipped), p, 'kept');
    const out17 = new Float32Array(17);
    p(row, out17, 0);
    const out18 = new Float32Array(18);
    st.projection(withCard, wider)(row, out18, 0);
    assert.equal(out18[0], 3);
    assert.deepEqual(Array.from(out18.subarray(1)), Array.from(out17));
    const missing = { features: [{ name: 'nope', definition: '' }] } as unknown as ModelManifest;
    assert.throws(() => st.projection(withCard, missing), /nope/);
  });
});

describe('signals shadow', () => {
  it('computes the candidate’s row for its shadow share after the answer, and reports its distribution', async () => {
    const active = compileSignals(signalsDoc('1.0.0'));
    const served = new ServedSignals(active, withCard, { candidate: '1.1.0', canaryPercent: 0, shadowPercent: 100 });
    const recorder = new SignalsShadow();
    const st = new SignalsStage({
      source: { current: served },
      store: () => store([4]),
      timeoutMs: 20,
      shadow: recorder,
    });
    for (let i = 0; i < 3; i++) {
      const e = parsePaymentEvent(validEvent({ transactionId: `tx-sh-${i}`, cardFingerprint: 'tok_1' }));
      const a = await st.aggregates(e, undefined);
      assert.equal(a.signals, active, 'the active version decides');
      const row = st.row(e, NO_HISTORY, a);
      st.shadow(e, NO_HISTORY, a, row);
    }
    await new Promise((r) => setImmediate(r));
    const report = recorder.report();
    assert.deepEqual([report?.active, report?.candidate, report?.payments], ['1.0.0', '1.1.0', 3]);
    const card = report?.signals.find((s) => s.name === 'card_users_1h');
    assert.deepEqual([card?.n, card?.mean, card?.meanAbsDiff], [3, 4, undefined], 'a new signal: nothing to compare');
    assert.equal(
      report?.signals.find((s) => s.name === 'amount_log')?.meanAbsDiff,
      0,
      'the same feature, the same value',
    );
  });
});
