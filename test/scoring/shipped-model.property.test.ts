import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { FEATURE_COUNT, FEATURE_NAMES, featurize } from '../../lib/features/featurizer';
import type { UserContext } from '../../lib/domain/user-context';
import { InlineOrtBackend } from '../../lib/inference/ort-session';
import type { ModelManifest } from '../../lib/models/manifest';
import { ModelFolder } from '../../lib/models/model-folder';
import { MAX_AMOUNT, parsePaymentEvent, type PaymentEvent } from '../../lib/domain/payment-event';
import { COUNTRY_CODES, CURRENCY_CODES } from '../../lib/domain/iso-codes';
import { BUNDLED_MODELS } from '../support/models';

const countries = [...COUNTRY_CODES];
const currencies = [...CURRENCY_CODES];
const id = fc.string({ minLength: 1, maxLength: 128 });
const MIN_MS = Date.parse('1970-01-01T00:00:00Z');
const MAX_MS = Date.parse('2100-01-01T00:00:00Z');
const pad = (n: number): string => String(n).padStart(2, '0');

/** An ISO 8601 date-time with a zone (`Z` or ±hh:mm, −12:00 … +14:00), as the schema accepts it. */
const timestamp = fc
  .tuple(fc.integer({ min: MIN_MS, max: MAX_MS }), fc.integer({ min: -12 * 4, max: 14 * 4 }), fc.boolean())
  .map(([ms, quarters, utc]) => {
    if (utc) return new Date(ms).toISOString();
    const off = quarters * 15;
    const local = new Date(ms + off * 60_000).toISOString().slice(0, 19);
    const sign = off < 0 ? '-' : '+';
    return `${local}${sign}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  });

/** Every valid payment event: each field over its whole accepted range, optional fields present or not. */
const validEvent: fc.Arbitrary<PaymentEvent> = fc
  .record(
    {
      transactionId: id,
      userId: id,
      sessionId: id,
      amount: fc.double({ min: Number.MIN_VALUE, max: MAX_AMOUNT, noNaN: true }),
      currency: fc.constantFrom(...currencies),
      merchantId: id,
      merchantCategory: fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
      country: fc.constantFrom(...countries),
      ipCountry: fc.constantFrom(...countries),
      deviceId: id,
      channel: fc.constantFrom('web' as const, 'app' as const, 'pos' as const),
      timestamp,
      note: fc.string({ maxLength: 50 }),
    },
    {
      requiredKeys: [
        'transactionId',
        'userId',
        'amount',
        'currency',
        'merchantId',
        'merchantCategory',
        'country',
        'channel',
        'timestamp',
      ],
    },
  )
  .map((raw) => parsePaymentEvent(raw)); // a generator bug fails loudly here instead of testing invalid events

/** Any context the stores can hand the featurizer (profile schema ranges; velocity counters ≥ 0). */
const context: fc.Arbitrary<UserContext> = fc.record({
  profile: fc.option(
    fc.record({
      homeCountry: fc.constantFrom(...countries),
      usualAmount: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1e12, noNaN: true })),
      knownDevices: fc.array(id, { maxLength: 5 }),
      accountCreatedAt: fc.integer({ min: MIN_MS, max: MAX_MS }).map((ms) => new Date(ms).toISOString()),
    }),
    { nil: null },
  ),
  velocity: fc.record({
    count1m: fc.nat({ max: 1e6 }),
    count1h: fc.nat({ max: 1e7 }),
    count24h: fc.nat({ max: 1e8 }),
    sum24h: fc.double({ min: 0, max: 1e15, noNaN: true }),
    distinctCountries24h: fc.nat({ max: 300 }),
  }),
});

describe('the shipped model (models/fraud) on every valid event', () => {
  let backend: InlineOrtBackend;
  let manifest: ModelManifest;
  before(async () => {
    const artifact = await new ModelFolder(BUNDLED_MODELS, 'fraud', undefined, FEATURE_NAMES).load();
    manifest = artifact.manifest;
    backend = await InlineOrtBackend.create(
      {
        bytes: artifact.bytes,
        inputName: manifest.input.name,
        outputName: manifest.output.name,
        inputWidth: FEATURE_COUNT,
      },
      { executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' },
    );
  });
  after(() => backend.dispose());

  it('gives a finite score in [0, 1] for every one (batches of up to 64, as the batcher runs them)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(validEvent, context), { minLength: 1, maxLength: 64 }), async (pairs) => {
        const input = new Float32Array(pairs.length * FEATURE_COUNT);
        pairs.forEach(([e, c], i) => featurize(e, c, input, i * FEATURE_COUNT));
        const { scores } = await backend.run(input, pairs.length);
        assert.equal(scores.length, pairs.length);
        scores.forEach((s, i) =>
          assert.ok(Number.isFinite(s) && s >= 0 && s <= 1, `row ${i}: score ${s} is not a finite number in [0, 1]`),
        );
      }),
      { numRuns: 300 },
    );
  });
});
