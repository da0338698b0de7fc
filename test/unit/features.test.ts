import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  DEFAULT_USUAL_AMOUNT,
  FEATURE_COUNT,
  FEATURE_NAMES,
  featurize,
  localHour,
} from '../../lib/features/featurizer';
import { NO_HISTORY, type UserContext } from '../../lib/domain/user-context';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { validEvent } from '../support/events';

const at = (row: Float32Array, name: string): number => {
  const i = FEATURE_NAMES.indexOf(name);
  assert.ok(i >= 0, name);
  return row[i] as number;
};

const profile: UserContext = {
  profile: {
    homeCountry: 'FR',
    usualAmount: 40,
    knownDevices: ['dev-abc'],
    accountCreatedAt: '2025-11-30T10:15:00+01:00',
  },
  velocity: { count1m: 2, count1h: 5, count24h: 9, sum24h: 800, distinctCountries24h: 3 },
};

describe('featurizer', () => {
  it('fills every feature in manifest order', () => {
    const row = featurize(parsePaymentEvent(validEvent()), profile);
    assert.equal(row.length, FEATURE_COUNT);
    assert.equal(new Set(FEATURE_NAMES).size, FEATURE_COUNT);
    assert.ok(Math.abs(at(row, 'amount_log') - Math.log1p(129.95)) < 1e-5);
    assert.ok(Math.abs(at(row, 'amount_vs_usual') - Math.log(130.95 / 41)) < 1e-5);
    assert.ok(Math.abs(at(row, 'velocity_1m') - Math.log1p(2)) < 1e-6);
    assert.ok(Math.abs(at(row, 'velocity_24h') - Math.log1p(9)) < 1e-6);
    assert.equal(at(row, 'distinct_countries_24h'), 3);
    assert.equal(at(row, 'new_device'), 0);
    assert.equal(at(row, 'device_missing'), 0);
    assert.equal(at(row, 'ip_country_mismatch'), 0);
    assert.equal(at(row, 'foreign_country'), 0);
    assert.equal(at(row, 'risky_mcc'), 0);
    assert.equal(at(row, 'night_hour'), 0);
    assert.ok(Math.abs(at(row, 'account_age_log') - Math.log1p(365)) < 1e-4);
    assert.equal(at(row, 'channel_web'), 1);
    assert.equal(at(row, 'channel_app'), 0);
    assert.equal(at(row, 'has_profile'), 1);
  });

  it('flags the fraud patterns', () => {
    const e = parsePaymentEvent(
      validEvent({
        deviceId: 'dev-new',
        ipCountry: 'NG',
        country: 'US',
        merchantCategory: '7995',
        timestamp: '2026-11-30T03:10:00-05:00',
        channel: 'app',
      }),
    );
    const row = featurize(e, profile);
    for (const f of ['new_device', 'ip_country_mismatch', 'foreign_country', 'risky_mcc', 'night_hour', 'channel_app'])
      assert.equal(at(row, f), 1, f);
    assert.equal(at(row, 'channel_web'), 0);
  });

  it('gives a user with no history the documented defaults', () => {
    const row = featurize(parsePaymentEvent(validEvent()), NO_HISTORY);
    assert.ok(Math.abs(at(row, 'amount_vs_usual') - Math.log(130.95 / (DEFAULT_USUAL_AMOUNT + 1))) < 1e-5);
    for (const f of [
      'velocity_1m',
      'velocity_1h',
      'velocity_24h',
      'amount_sum_24h_log',
      'distinct_countries_24h',
      'foreign_country',
      'account_age_log',
      'has_profile',
    ]) {
      assert.equal(at(row, f), 0, f);
    }
    assert.equal(at(row, 'new_device'), 1, 'a device on an account with no history is new');
  });

  it("reads the local hour in the timestamp's own offset", () => {
    assert.equal(localHour('2026-11-30T03:10:00-05:00'), 3);
    assert.equal(localHour('2026-11-30T23:59:59Z'), 23);
    assert.equal(localHour('2026-11-30T00:30:00+0530'), 0);
  });

  it('writes into a batch buffer at an offset without touching neighbours', () => {
    const buf = new Float32Array(FEATURE_COUNT * 3).fill(-7);
    featurize(parsePaymentEvent(validEvent()), profile, buf, FEATURE_COUNT);
    assert.ok(buf.subarray(0, FEATURE_COUNT).every((v) => v === -7));
    assert.ok(buf.subarray(FEATURE_COUNT * 2).every((v) => v === -7));
    assert.deepEqual(
      buf.subarray(FEATURE_COUNT, FEATURE_COUNT * 2),
      featurize(parsePaymentEvent(validEvent()), profile),
    );
  });

  it('always yields finite features for any valid event (property)', () => {
    const arbEvent = fc.record({
      amount: fc.double({ min: 0.01, max: 1e9, noNaN: true }),
      channel: fc.constantFrom('web', 'app', 'pos'),
      merchantCategory: fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
      hour: fc.integer({ min: 0, max: 23 }),
      deviceId: fc.option(fc.string({ minLength: 1, maxLength: 10 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(arbEvent, fc.boolean(), (a, withProfile) => {
        const e = parsePaymentEvent(
          validEvent({
            amount: a.amount,
            channel: a.channel,
            merchantCategory: a.merchantCategory,
            deviceId: a.deviceId,
            timestamp: `2026-11-30T${String(a.hour).padStart(2, '0')}:00:00Z`,
          }),
        );
        const row = featurize(e, withProfile ? profile : NO_HISTORY);
        return row.every(Number.isFinite) && at(row, 'night_hour') === (a.hour < 5 ? 1 : 0);
      }),
    );
  });
});
