import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePaymentEvent, type PaymentEvent } from '../../../lib/domain/payment-event';
import { AppError } from '../../../lib/errors/errors';
import { BUCKETS } from '../../../lib/signals/aggregate-store';
import { compileSignals } from '../../../lib/signals/compile-signals';
import { richEvent } from '../../support/rich-event';

const doc = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  schemaVersion: 1,
  name: 'test',
  version: '1.2.3',
  ...over,
});

const event = (over: Record<string, unknown> = {}): PaymentEvent => parsePaymentEvent(richEvent(over));

function rejection(value: unknown): AppError {
  try {
    compileSignals(value);
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err;
  }
  assert.fail('the document was accepted');
}

const AGGREGATES = [
  { name: 'card_count_1h', key: 'cardFingerprint', op: 'count', window: '1h' },
  { name: 'card_users_1h', key: 'cardFingerprint', op: 'distinct', of: 'userId', window: '1h' },
  { name: 'user_sum_24h', key: 'userId', op: 'sum', of: 'amount', window: '24h' },
];

describe('compileSignals: aggregates', () => {
  it('groups aggregates by key tuple and gives each a stable id of its definition', () => {
    const s = compileSignals(
      doc({
        aggregates: [
          ...AGGREGATES,
          { name: 'pair_count', key: ['cardFingerprint', 'merchantId'], op: 'count', window: '60m' },
          { name: 'card_count_60m', key: ['cardFingerprint'], op: 'count', window: '60m' },
          { name: 'card_users_cap', key: 'cardFingerprint', op: 'distinct', of: 'userId', window: '1h', cap: 25 },
          { name: 'card_users_10', key: 'cardFingerprint', op: 'distinct', of: 'userId', window: '1h', cap: 10 },
        ],
      }),
    );
    const { aggregates, groups } = s.plan;
    assert.deepEqual(
      groups.map((g) => [g.id, [...g.key], [...g.aggregates]]),
      [
        ['cardFingerprint', ['cardFingerprint'], [0, 1, 4, 5, 6]],
        ['userId', ['userId'], [2]],
        ['cardFingerprint+merchantId', ['cardFingerprint', 'merchantId'], [3]],
      ],
    );
    const byName = new Map(aggregates.map((a) => [a.name, a]));
    const spec = (n: string): (typeof aggregates)[number] => byName.get(n) as (typeof aggregates)[number];
    assert.equal(spec('card_count_1h').windowMs, 3_600_000);
    assert.equal(spec('card_count_1h').bucketMs, 3_600_000 / BUCKETS);
    assert.equal(spec('card_users_1h').cap, 25);
    assert.equal(spec('card_count_1h').cap, 0);
    assert.equal(spec('card_count_60m').id, spec('card_count_1h').id, 'same definition, same counts');
    assert.equal(spec('card_users_cap').id, spec('card_users_1h').id, 'the default cap is 25');
    assert.notEqual(spec('card_users_10').id, spec('card_users_1h').id);
    assert.notEqual(spec('pair_count').id, spec('card_count_1h').id);
    assert.match(spec('card_count_1h').id, /^[A-Za-z0-9_-]{12}$/);
    const again = compileSignals(doc({ version: '2.0.0', aggregates: [AGGREGATES[0]] }));
    assert.equal(again.plan.aggregates[0]?.id, spec('card_count_1h').id, 'stable across versions');
  });

  it('gives each group its entity (composites joined by U+0000, undefined without a field) and each aggregate its value', () => {
    const s = compileSignals(
      doc({
        aggregates: [
          ...AGGREGATES,
          { name: 'pair_count', key: ['cardFingerprint', 'merchantId'], op: 'count', window: '1h' },
          { name: 'bin_max', key: 'card.bin', op: 'max', of: 'amount', window: '1d' },
          { name: 'ship_emails', key: 'shippingAddress.postalCode', op: 'distinct', of: 'email', window: '1d' },
        ],
      }),
    );
    const input = s.aggregateInput(event({ amount: 42 }), 'tx-1', 1_000);
    assert.equal(input.transactionId, 'tx-1');
    assert.equal(input.at, 1_000);
    assert.deepEqual(input.entities, ['fp_9f8e7d6c', 'user-42', 'fp_9f8e7d6c\u0000m-991', '411111', '10115']);
    assert.deepEqual(input.counted, [true, true, true, true, true, true]);
    assert.deepEqual(input.values, [undefined, 'user-42', 42, undefined, 42, 'Jane.Doe+shop@example.com']);
    const bare = s.aggregateInput(parsePaymentEvent(richEvent({ card: undefined, email: undefined })), 'tx-2', 2);
    assert.deepEqual(bare.entities, [undefined, 'user-42', undefined, undefined, '10115']);
    assert.deepEqual(bare.counted, [false, false, true, false, false, false]);
    assert.deepEqual(bare.values, [undefined, undefined, 129.95, undefined, undefined, undefined]);
  });

  it('counts only the payments a where filter holds for (a runtime error counts nothing)', () => {
    const s = compileSignals(
      doc({
        aggregates: [
          { name: 'big', key: 'userId', op: 'count', window: '1h', where: 'event.amount >= 100.0' },
          { name: 'visa', key: 'userId', op: 'count', window: '1h', where: 'event.card.bin.startsWith("4")' },
          { name: 'all', key: 'userId', op: 'count', window: '1h' },
        ],
      }),
    );
    assert.deepEqual(s.aggregateInput(event({ amount: 150 }), 't', 0).counted, [true, true, true]);
    assert.deepEqual(s.aggregateInput(event({ amount: 50 }), 't', 0).counted, [false, true, true]);
    assert.deepEqual(s.aggregateInput(event({ card: undefined }), 't', 0).counted, [true, false, true]);
  });

  it('refuses a where that does not compile or is not a bool, naming aggregates.<i>.where and the column', () => {
    const e = rejection(
      doc({
        aggregates: [
          { name: 'a', key: 'userId', op: 'count', window: '1h', where: 'event.amount >' },
          { name: 'b', key: 'userId', op: 'count', window: '1h', where: 'event.amount + 1.0' },
          { name: 'c', key: 'userId', op: 'count', window: '1h', where: 'signals.a > 1.0' },
        ],
      }),
    );
    assert.deepEqual(
      e.errors.map((x) => [x.path, x.column]),
      [
        ['aggregates.0.where', 15],
        ['aggregates.1.where', 1],
        ['aggregates.2.where', 1],
      ],
    );
    assert.match(e.errors[1]?.message ?? '', /must be bool, not double/);
  });
});
