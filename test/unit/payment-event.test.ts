import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { parseJson } from '../../lib/http/parse-json';
import { validEvent } from '../support/events';

function fieldErrors(value: unknown): { path: string; message: string }[] {
  try {
    parsePaymentEvent(value);
  } catch (err) {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'validation_failed');
    return [...err.errors];
  }
  assert.fail('expected a validation error');
}

describe('payment event schema', () => {
  it('accepts a valid event and optional fields left out', () => {
    const e = parsePaymentEvent(validEvent());
    assert.equal(e.amount, 129.95);
    const { sessionId: _s, ipCountry: _i, deviceId: _d, ...minimal } = validEvent();
    assert.equal(parsePaymentEvent(minimal).sessionId, undefined);
    assert.equal(parsePaymentEvent(validEvent({ note: 'x'.repeat(4000) })).note?.length, 4000);
  });

  const bad: [string, unknown][] = [
    ['transactionId', ''],
    ['transactionId', 'x'.repeat(129)],
    ['transactionId', 42],
    ['userId', ''],
    ['userId', null],
    ['sessionId', ''],
    ['amount', 0],
    ['amount', -5],
    ['amount', 1e9 + 1],
    ['amount', '12'],
    ['currency', 'EURO'],
    ['currency', 'eur'],
    ['currency', 'XYZ'],
    ['merchantId', ''],
    ['merchantCategory', '541'],
    ['merchantCategory', 5411],
    ['merchantCategory', 'abcd'],
    ['country', 'FRA'],
    ['country', 'ZZ'],
    ['ipCountry', 'fr'],
    ['deviceId', ''],
    ['channel', 'phone'],
    ['timestamp', '2026-11-30T10:15:00'],
    ['timestamp', '2026-11-30'],
    ['timestamp', 'yesterday'],
    ['timestamp', '2026-13-45T10:15:00Z'],
    ['note', 'x'.repeat(4001)],
  ];
  for (const [field, value] of bad) {
    it(`rejects ${field} = ${JSON.stringify(value)?.slice(0, 20)}`, () => {
      const errors = fieldErrors(validEvent({ [field]: value } as never));
      assert.deepEqual(
        errors.map((e) => e.path),
        [field],
      );
      if (typeof value === 'string' && value.length >= 4)
        assert.ok(!errors[0]?.message.includes(value), 'message must not echo the value');
    });
  }

  it('names every missing required field', () => {
    const errors = fieldErrors({});
    assert.deepEqual(
      errors.map((e) => e.path).sort(),
      [
        'amount',
        'channel',
        'country',
        'currency',
        'merchantCategory',
        'merchantId',
        'timestamp',
        'transactionId',
        'userId',
      ].sort(),
    );
    assert.ok(errors.every((e) => e.message === 'is required'));
  });

  it('rejects unknown fields, each by name, together with other errors', () => {
    const errors = fieldErrors(validEvent({ amount: -1, cardNumber: '4111', extra: 1 } as never));
    assert.deepEqual(errors.map((e) => e.path).sort(), ['amount', 'cardNumber', 'extra']);
  });

  it('rejects non-objects', () => {
    for (const v of [null, [], 'str', 3]) assert.equal(fieldErrors(v)[0]?.path, '');
  });

  it('prefixes paths for batch items', () => {
    assert.throws(
      () => parsePaymentEvent(validEvent({ amount: 0 }), 'events.3'),
      (e: AppError) => e.errors[0]?.path === 'events.3.amount',
    );
  });

  it('parseJson rejects malformed JSON with invalid_json', () => {
    assert.throws(
      () => parseJson('{"a":'),
      (e: AppError) => e.code === 'invalid_json',
    );
    assert.deepEqual(parseJson('{"a":1}'), { a: 1 });
  });
});
