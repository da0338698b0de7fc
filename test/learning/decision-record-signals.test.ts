/**
 * The decision log records, point in time, the signal values a decision used that are not already its model's
 * inputs, with the signals version; the backtest replays rules over both.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { EMPTY_VELOCITY } from '../../lib/domain/user-context';
import { FEATURE_NAMES } from '../../lib/features/featurizer';
import { toDecisionRecord } from '../../lib/learning/decision-record';
import { KeyedHash } from '../../lib/platform/keyed-hash';
import type { ModelManifest } from '../../lib/models/manifest';
import type { DecidedPayment } from '../../lib/scoring/scorer';
import type { ScoreResult } from '../../lib/scoring/result';
import { compileSignals } from '../../lib/signals/compile-signals';
import { CARD_USERS, signalsDoc } from '../signals/support';
import { validEvent } from '../support/events';

const withCard = compileSignals(signalsDoc('1.1.0', { aggregates: [CARD_USERS] }));
const manifest = {
  name: 'fraud',
  version: '1.0.0',
  features: FEATURE_NAMES.map((name) => ({ name, definition: '' })),
} as unknown as ModelManifest;

function decided(row: Float64Array): DecidedPayment {
  return {
    event: parsePaymentEvent(validEvent({ transactionId: 'tx-rec-1' })),
    row: Float32Array.from(row.subarray(1)),
    velocity: EMPTY_VELOCITY,
    manifest,
    result: {
      transactionId: 'tx-rec-1',
      model: { name: 'fraud', version: '1.0.0' },
      score: 0.1,
      decision: 'approve',
      reasons: [],
      source: 'local',
    } as unknown as ScoreResult,
    signals: { version: withCard, row },
  };
}

describe('decision record: signals', () => {
  it('logs the signals that are not model inputs, and the version', () => {
    const row = new Float64Array(withCard.names.length).fill(0.5);
    row[0] = 3; // card_users_1h
    const r = toDecisionRecord(decided(row), new KeyedHash('k-0123456789abcdef'), Date.parse('2026-12-01T00:00:00Z'));
    assert.deepEqual(r.signals, { card_users_1h: 3 });
    assert.deepEqual(r.signalsVersion, { name: 'default', version: '1.1.0' });
    assert.equal(r.features['amount_log'], 0.5, 'the model inputs are in features');
  });
});
