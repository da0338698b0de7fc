import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parsePaymentEvent, type PaymentEvent } from '../../../lib/domain/payment-event';
import { NO_HISTORY, type UserContext } from '../../../lib/domain/user-context';
import { AppError } from '../../../lib/errors/errors';
import { FEATURES } from '../../../lib/features/featurizer';
import { compileSignals } from '../../../lib/signals/compile-signals';
import type { CompiledSignals } from '../../../lib/signals/compiled-signals';
import { richEvent } from '../../support/rich-event';

const doc = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  schemaVersion: 1,
  name: 'test',
  version: '1.2.3',
  ...over,
});

const event = (over: Record<string, unknown> = {}): PaymentEvent => parsePaymentEvent(richEvent(over));

const context: UserContext = {
  profile: { homeCountry: 'FR', usualAmount: 40, knownDevices: ['dev-abc'], accountCreatedAt: '2025-11-30T10:15:00Z' },
  velocity: { count1m: 1, count1h: 4, count24h: 9, sum24h: 800, distinctCountries24h: 2 },
};

function rejection(value: unknown): AppError {
  try {
    compileSignals(value);
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err;
  }
  assert.fail('the document was accepted');
}

function row(s: CompiledSignals, e: PaymentEvent, ctx: UserContext, aggregates: readonly number[]): Float64Array {
  const out = new Float64Array(s.names.length);
  s.compute(e, ctx, Float64Array.from(aggregates), out);
  return out;
}

const at = (s: CompiledSignals, r: Float64Array, name: string): number => r[s.indexOf(name) ?? -1] as number;

const AGGREGATES = [
  { name: 'card_count_1h', key: 'cardFingerprint', op: 'count', window: '1h' },
  { name: 'card_users_1h', key: 'cardFingerprint', op: 'distinct', of: 'userId', window: '1h' },
  { name: 'user_sum_24h', key: 'userId', op: 'sum', of: 'amount', window: '24h' },
];

describe('compileSignals: features', () => {
  it('computes each transform over the event, the context and the aggregates, in document order', () => {
    const s = compileSignals(
      doc({
        aggregates: AGGREGATES,
        features: [
          { name: 'amount_log', builtin: 'amount_log' },
          { name: 'card_count_log', log1p: 'signals.card_count_1h' },
          { name: 'sum_vs_amount', ratio: ['signals.user_sum_24h', 'event.amount'] },
          { name: 'per_card', ratio: ['event.amount', 'signals.card_count_1h'] },
          { name: 'amount_band', bucket: 'event.amount', edges: [10, 100, 1000] },
          { name: 'is_web', oneHot: 'channel', equals: 'web' },
          { name: 'is_visa', oneHot: 'card.bin', equals: '411111' },
          { name: 'hour_count', value: 'velocity.count1h' },
          { name: 'shared_card', expr: 'signals.card_users_1h >= 3.0' },
          { name: 'vs_usual', expr: 'has(profile.usualAmount) ? event.amount / profile.usualAmount : 0.0' },
          { name: 'twice', expr: 'signals.card_count_log * 2.0' },
        ],
      }),
    );
    assert.deepEqual(s.names.slice(0, 4), ['card_count_1h', 'card_users_1h', 'user_sum_24h', 'amount_log']);
    const e = event({ amount: 200 });
    const r = row(s, e, context, [3, 4, 600]);
    assert.deepEqual([...r.slice(0, 3)], [3, 4, 600]);
    assert.equal(at(s, r, 'amount_log'), Math.log1p(200));
    assert.equal(at(s, r, 'card_count_log'), Math.log1p(3));
    assert.equal(at(s, r, 'sum_vs_amount'), 3);
    assert.equal(at(s, r, 'per_card'), 200 / 3);
    assert.equal(at(s, r, 'amount_band'), 2);
    assert.equal(at(s, r, 'is_web'), 1);
    assert.equal(at(s, r, 'is_visa'), 1);
    assert.equal(at(s, r, 'hour_count'), 4);
    assert.equal(at(s, r, 'shared_card'), 1);
    assert.equal(at(s, r, 'vs_usual'), 5);
    assert.equal(at(s, r, 'twice'), 2 * Math.log1p(3));
    // zeros: a ratio over 0 is 0, bucket edges, oneHot off, no profile
    const r0 = row(s, event({ amount: 5, channel: 'app', card: undefined }), NO_HISTORY, [0, 0, 0]);
    assert.equal(at(s, r0, 'per_card'), 0);
    assert.equal(at(s, r0, 'amount_band'), 0);
    assert.equal(at(s, r0, 'is_web'), 0);
    assert.equal(at(s, r0, 'is_visa'), 0);
    assert.equal(at(s, r0, 'shared_card'), 0);
    assert.equal(at(s, r0, 'vs_usual'), 0);
    assert.equal(at(s, row(s, event({ amount: 1000 }), context, [0, 0, 0]), 'amount_band'), 3, 'an edge is reached');
  });

  it('gives 0 for an expression that fails at run time or is not finite, and ints and bools as numbers', () => {
    const s = compileSignals(
      doc({
        features: [
          { name: 'bin_first', expr: 'event.card.bin == "411111"' },
          { name: 'an_int', expr: 'size(event.currency)' },
          { name: 'infinite', expr: 'event.amount / 0.0' },
        ],
      }),
    );
    assert.deepEqual([...row(s, event({ card: undefined }), context, [])], [0, 3, 0]);
    assert.deepEqual([...row(s, event(), context, [])], [1, 3, 0]);
  });

  it('buckets a value by the number of edges it reaches, for any edges and value', () => {
    const arbEdges = fc
      .uniqueArray(fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }), {
        minLength: 1,
        maxLength: 8,
      })
      .map((xs) => xs.map((x) => (Object.is(x, -0) ? 0 : x)).sort((a, b) => a - b))
      .filter((xs) => xs.every((x, i) => i === 0 || x > (xs[i - 1] as number)));
    fc.assert(
      fc.property(arbEdges, fc.double({ min: 0.01, max: 1e6, noNaN: true }), (edges, amount) => {
        const s = compileSignals(doc({ features: [{ name: 'band', bucket: 'event.amount', edges }] }));
        const got = row(s, event({ amount }), context, [])[0];
        assert.equal(got, edges.filter((e) => e <= amount).length);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a reference to a signal not declared before the feature, naming the field and the column', () => {
    const e = rejection(
      doc({
        aggregates: [AGGREGATES[0]],
        features: [
          { name: 'early', log1p: 'signals.later' },
          { name: 'later', value: 'signals.card_count_1h' },
          { name: 'self', value: 'signals.self' },
          { name: 'pair', ratio: ['signals.nope', 'signals.later'] },
          { name: 'ex', expr: 'signals.early + signals.missing' },
        ],
      }),
    );
    assert.equal(e.code, 'signals_invalid');
    assert.equal(e.status, 422);
    assert.deepEqual(
      e.errors.map((x) => x.path),
      ['features.0.log1p', 'features.2.value', 'features.3.ratio.0', 'features.4.expr'],
    );
    assert.match(e.errors[0]?.message ?? '', /signals\.later is declared after this feature/);
    assert.match(e.errors[1]?.message ?? '', /signals\.self is declared after/);
    assert.match(e.errors[2]?.message ?? '', /signals\.nope is not declared/);
    assert.match(e.errors[3]?.message ?? '', /^column 17: signals\.missing is not declared/);
    assert.equal(e.errors[3]?.column, 17);
    assert.match(e.message, /^Signals test 1\.2\.3 is invalid: features\.0\.log1p: /);
  });

  it('refuses an unknown builtin, an expression that does not compile or type-check, naming each', () => {
    const e = rejection(
      doc({
        features: [
          { name: 'a', builtin: 'amount_logg' },
          { name: 'b', expr: 'event.amount >' },
          { name: 'c', expr: '"text"' },
          { name: 'd', expr: 'nosuch + 1.0' },
          { name: 'e', builtin: 'night_hour' },
        ],
      }),
    );
    assert.deepEqual(
      e.errors.map((x) => x.path),
      ['features.0.builtin', 'features.1.expr', 'features.2.expr', 'features.3.expr'],
    );
    assert.match(e.errors[0]?.message ?? '', /unknown builtin "amount_logg": one of amount_log, /);
    assert.equal(e.errors[1]?.column, 15);
    assert.match(e.errors[2]?.message ?? '', /must be double or int or uint or bool, not string/);
  });

  it('refuses a document that does not match the schema, naming every field', () => {
    const e = rejection({
      schemaVersion: 1,
      name: 'Bad Name',
      aggregates: [
        { name: 'x', key: 'userId', op: 'sum', window: '1h' },
        { name: 'y', key: 'nosuch', op: 'count', window: '2y' },
      ],
      features: [
        { name: 'x', builtin: 'amount_log' },
        { name: 'z', log1p: 'event.amount', value: 'event.amount' },
      ],
    });
    assert.equal(e.code, 'signals_invalid');
    const paths = e.errors.map((x) => x.path);
    for (const p of ['name', 'version', 'aggregates.0.of', 'aggregates.1.key', 'aggregates.1.window', 'features.1'])
      assert.ok(paths.includes(p), `${p} in ${paths.join(', ')}`);
    const twice = rejection(
      doc({ aggregates: [AGGREGATES[0]], features: [{ name: 'card_count_1h', builtin: 'amount_log' }] }),
    );
    assert.deepEqual(
      twice.errors.map((x) => [x.path, x.message]),
      [['features.0.name', 'card_count_1h is declared twice']],
    );
    assert.match(rejection('nope').message, /^The signals document is invalid/);
  });
});

describe('compileSignals: projections and definitions', () => {
  const s = compileSignals(
    doc({
      aggregates: [AGGREGATES[1], { ...AGGREGATES[0], where: 'event.amount > 10.0', description: 'Card velocity.' }],
      features: [
        { name: 'amount_log', builtin: 'amount_log' },
        { name: 'night_hour', builtin: 'night_hour', description: 'Night.' },
        { name: 'users_log', log1p: 'signals.card_users_1h' },
        { name: 'band', bucket: 'event.amount', edges: [10, 100] },
      ],
    }),
  );

  it("projects a signals row onto a model's feature list, in its order, as Float32", () => {
    const project = s.projection(['users_log', 'card_count_1h', 'amount_log']);
    const r = row(s, event({ amount: 0.1 }), context, [7, 2]);
    const out = new Float32Array(5).fill(-1);
    project(r, out, 1);
    assert.deepEqual([...out], [-1, Math.fround(Math.log1p(7)), 2, Math.fround(Math.log1p(0.1)), -1]);
  });

  it('refuses a feature list naming features the version does not compute, naming each', () => {
    assert.throws(
      () => s.projection(['amount_log', 'nosuch', 'velocity_1m']),
      (e: unknown) =>
        e instanceof AppError &&
        e.code === 'model_invalid' &&
        /do not compute nosuch, velocity_1m/.test(e.message) &&
        e.errors.map((x) => x.path).join() === 'features.1,features.2',
    );
  });

  it('defines every signal in plain words', () => {
    assert.equal(s.definition('card_users_1h'), 'distinct userId per cardFingerprint over 1h (at most 25)');
    assert.equal(
      s.definition('card_count_1h'),
      'payments per cardFingerprint over 1h, counting only payments where event.amount > 10.0 — Card velocity.',
    );
    assert.equal(s.definition('amount_log'), FEATURES.find((f) => f.name === 'amount_log')?.definition);
    assert.match(s.definition('night_hour') ?? '', /^local hour .* — Night\.$/);
    assert.equal(s.definition('users_log'), 'ln(1 + signals.card_users_1h)');
    assert.match(s.definition('band') ?? '', /edges \[10, 100\] event\.amount reaches/);
    assert.equal(s.definition('nosuch'), undefined);
    const other = compileSignals(
      doc({
        aggregates: [
          { name: 's', key: ['cardFingerprint', 'merchantId'], op: 'sum', of: 'amount', window: '30d' },
          { name: 'm', key: 'deviceId', op: 'max', of: 'amount', window: '15m' },
          { name: 'v', key: 'email', op: 'avg', of: 'amount', window: '24h' },
          { name: 'd', key: 'ipAddress', op: 'distinct', of: 'cardFingerprint', window: '1h', cap: 5 },
        ],
      }),
    );
    assert.deepEqual(
      other.names.map((n) => other.definition(n)),
      [
        'sum of amount per cardFingerprint and merchantId over 30d',
        'largest amount per deviceId over 15m',
        'average amount per email over 24h',
        'distinct cardFingerprint per ipAddress over 1h (at most 5)',
      ],
    );
  });

  it('exposes the document, its name and version, and an empty plan without aggregates', () => {
    const none = compileSignals(doc({ features: [{ name: 'amount_log', builtin: 'amount_log' }] }));
    assert.deepEqual([none.name, none.version, none.document.features.length], ['test', '1.2.3', 1]);
    assert.deepEqual(none.plan, { aggregates: [], groups: [] });
    assert.deepEqual(none.aggregateInput(event(), 't', 0), {
      transactionId: 't',
      at: 0,
      entities: [],
      counted: [],
      values: [],
    });
    assert.equal(none.indexOf('amount_log'), 0);
    assert.equal(none.indexOf('nosuch'), undefined);
  });
});
