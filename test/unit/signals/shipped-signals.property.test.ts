import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parsePaymentEvent } from '../../../lib/domain/payment-event';
import type { UserContext } from '../../../lib/domain/user-context';
import { AppError } from '../../../lib/errors/errors';
import { FEATURE_COUNT, FEATURE_NAMES, FEATURES, featurize } from '../../../lib/features/featurizer';
import {
  loadShippedSignals,
  loadShippedSignalsSync,
  loadSignals,
  shippedSignalsDir,
} from '../../../lib/signals/shipped-signals';
import { validEvent } from '../../support/events';

const COUNTRIES = ['FR', 'US', 'DE', 'NG', 'GB'];
const pad = (n: number): string => String(n).padStart(2, '0');

const arbEvent = fc.record({
  amount: fc.double({ min: 0.01, max: 1e9, noNaN: true }),
  channel: fc.constantFrom('web', 'app', 'pos'),
  merchantCategory: fc.constantFrom('5411', '7995', '4829', '6051', '0000', '9999'),
  country: fc.constantFrom(...COUNTRIES),
  ipCountry: fc.option(fc.constantFrom(...COUNTRIES), { nil: undefined }),
  deviceId: fc.option(fc.constantFrom('dev-abc', 'dev-new', 'dev-2'), { nil: undefined }),
  day: fc.integer({ min: 1, max: 28 }),
  hour: fc.integer({ min: 0, max: 23 }),
  minute: fc.integer({ min: 0, max: 59 }),
  offset: fc.constantFrom('Z', '+01:00', '-05:00', '+05:30', '-11:00', '+14:00'),
});

const arbContext: fc.Arbitrary<UserContext> = fc.record({
  profile: fc.option(
    fc.record({
      homeCountry: fc.constantFrom(...COUNTRIES),
      usualAmount: fc.double({ min: 0, max: 1e6, noNaN: true }),
      knownDevices: fc.subarray(['dev-abc', 'dev-2', 'dev-9']),
      accountCreatedAt: fc
        .integer({ min: Date.parse('2015-01-01T00:00:00Z'), max: Date.parse('2027-01-01T00:00:00Z') })
        .map((ms) => new Date(ms).toISOString()),
    }),
    { nil: null },
  ),
  velocity: fc.record({
    count1m: fc.nat({ max: 100 }),
    count1h: fc.nat({ max: 1000 }),
    count24h: fc.nat({ max: 10_000 }),
    sum24h: fc.double({ min: 0, max: 1e9, noNaN: true }),
    distinctCountries24h: fc.nat({ max: 50 }),
  }),
});

describe('the shipped signals document', () => {
  const shipped = loadShippedSignalsSync();

  it('is default 1.0.0: the 17 features as builtins in the model input order, no aggregates', async () => {
    assert.deepEqual([shipped.name, shipped.version], ['default', '1.0.0']);
    assert.deepEqual(shipped.names, FEATURE_NAMES);
    assert.deepEqual(shipped.plan, { aggregates: [], groups: [] });
    for (const f of FEATURES) assert.equal(shipped.definition(f.name), f.definition);
    assert.equal(path.basename(shippedSignalsDir()), 'signals');
    const loaded = await loadShippedSignals();
    assert.deepEqual(loaded.names, shipped.names);
  });

  it('projected onto FEATURE_NAMES equals featurize() exactly, for any event and context', () => {
    const project = shipped.projection(FEATURE_NAMES);
    const signals = new Float64Array(shipped.names.length);
    const none = new Float64Array(0);
    const got = new Float32Array(FEATURE_COUNT + 2);
    fc.assert(
      fc.property(arbEvent, arbContext, (a, context) => {
        const event = parsePaymentEvent(
          validEvent({
            amount: a.amount,
            channel: a.channel,
            merchantCategory: a.merchantCategory,
            country: a.country,
            ipCountry: a.ipCountry,
            deviceId: a.deviceId,
            timestamp: `2026-11-${pad(a.day)}T${pad(a.hour)}:${pad(a.minute)}:00${a.offset}`,
          }),
        );
        const want = featurize(event, context);
        shipped.compute(event, context, none, signals);
        project(signals, got, 1);
        assert.deepEqual(got.subarray(1, 1 + FEATURE_COUNT), want);
      }),
      { numRuns: 500 },
    );
  });

  it('is read from a folder: the newest version of a name, or refused naming the file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'signals-'));
    mkdirSync(path.join(dir, 'default'));
    const text = (version: string): string =>
      JSON.stringify({ schemaVersion: 1, name: 'default', version, features: [{ name: 'a', builtin: 'amount_log' }] });
    writeFileSync(path.join(dir, 'default', '1.9.0.json'), text('1.9.0'));
    writeFileSync(path.join(dir, 'default', '1.10.0.json'), text('1.10.0'));
    writeFileSync(path.join(dir, 'default', '2.0.0.json'), '{ "schemaVersion": 1,');
    assert.equal(loadShippedSignalsSync({ dir, version: '1.10.0' }).version, '1.10.0');
    assert.equal((await loadShippedSignals({ dir, version: '1.9.0' })).version, '1.9.0');
    const bad = (e: unknown): boolean =>
      e instanceof AppError && e.code === 'signals_invalid' && e.message.includes(path.join('default', '2.0.0.json'));
    assert.throws(() => loadShippedSignalsSync({ dir }), bad);
    await assert.rejects(loadShippedSignals({ dir }), bad);
    await assert.rejects(
      loadShippedSignals({ dir, name: 'other' }),
      (e: unknown) => (e as AppError).code === 'not_found',
    );
    assert.throws(
      () => loadSignals(JSON.stringify({ schemaVersion: 1, name: 'x', version: '1' }), 'x.json'),
      (e: unknown) => e instanceof AppError && /^Signals x 1 \(x\.json\) is invalid: version/.test(e.message),
    );
  });
});
