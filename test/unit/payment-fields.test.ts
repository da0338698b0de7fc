/**
 * The fraud-signal fields of the payment event (lib/domain/payment-fields.ts): email, IP address, card, billing
 * and shipping address, user agent, metadata. Valid values parse (email and IP come back canonical), invalid
 * ones are refused naming the field, unknown fields are refused at every level, and a card number is refused in
 * every string field that could carry one (property tests with fast-check).
 */
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { containsCardNumber, isCardNumber } from '../../lib/domain/card-number';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { canonicalIp } from '../../lib/domain/payment-fields';
import { AppError } from '../../lib/errors/errors';
import { validEvent } from '../support/events';
import { richEvent } from '../support/rich-event';

function errorsOf(value: unknown): { path: string; message: string }[] {
  try {
    parsePaymentEvent(value);
  } catch (err) {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'validation_failed');
    return [...err.errors];
  }
  assert.fail('expected a validation error');
}

const paths = (value: unknown): string[] => errorsOf(value).map((e) => e.path);

/** A Luhn-valid card number of `digits.length + 1` digits. */
function withLuhn(digits: readonly number[]): string {
  for (let check = 0; check <= 9; check++) {
    const pan = digits.join('') + String(check);
    if (isCardNumber(pan)) return pan;
  }
  throw new Error('unreachable: one check digit always passes');
}
const pan = fc
  .array(fc.integer({ min: 0, max: 9 }), { minLength: 12, maxLength: 18 })
  .map(withLuhn)
  .chain((p) =>
    fc
      .tuple(fc.constantFrom('', ' ', '-'), fc.integer({ min: 2, max: 6 }))
      .map(([sep, size]) => (sep === '' ? p : (p.match(new RegExp(`.{1,${size}}`, 'g')) ?? []).join(sep))),
  );

describe('payment event: fraud-signal fields', () => {
  it('accepts every new field; email keeps its local part and lower-cases its domain; IPv6 is canonical', () => {
    const e = parsePaymentEvent(richEvent());
    assert.equal(e.email, 'Jane.Doe+shop@example.com');
    assert.equal(e.ipAddress, '2001:db8::1');
    assert.deepEqual(e.card, { bin: '411111', last4: '1111', fingerprint: 'fp_9f8e7d6c' });
    assert.deepEqual(e.billingAddress, { country: 'FR', postalCode: '75011' });
    assert.deepEqual(e.metadata, { campaign: 'black-friday', basketItems: 3, giftWrap: true, 'loyalty.tier': 'gold' });
    assert.equal(parsePaymentEvent(richEvent({ ipAddress: '203.0.113.7' })).ipAddress, '203.0.113.7');
    assert.deepEqual(parsePaymentEvent(richEvent({ shippingAddress: { country: 'HK' } })).shippingAddress, {
      country: 'HK',
    });
  });

  it('card.fingerprint fills cardFingerprint; both may be sent only when equal', () => {
    assert.equal(parsePaymentEvent(richEvent()).cardFingerprint, 'fp_9f8e7d6c');
    assert.equal(parsePaymentEvent(richEvent({ cardFingerprint: 'fp_9f8e7d6c' })).cardFingerprint, 'fp_9f8e7d6c');
    assert.equal(parsePaymentEvent(validEvent({ cardFingerprint: 'fp_1' })).cardFingerprint, 'fp_1');
    assert.equal(parsePaymentEvent(validEvent({ cardFingerprint: 'fp_1' })).card, undefined);
    assert.deepEqual(errorsOf(richEvent({ cardFingerprint: 'fp_other' })), [
      { path: 'card.fingerprint', message: 'must equal cardFingerprint when both are sent' },
    ]);
  });

  const bad: [string, Record<string, unknown>][] = [
    ['email', { email: 'no-at-sign' }],
    ['email', { email: 'a@b@example.com' }],
    ['email', { email: 'jane doe@example.com' }],
    ['email', { email: 'jane@localhost' }],
    ['email', { email: '.jane@example.com' }],
    ['email', { email: 'jane..doe@example.com' }],
    ['email', { email: `${'a'.repeat(65)}@example.com` }],
    ['email', { email: `a@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(63)}.com` }],
    ['email', { email: 'jane@example.com\n' }],
    ['email', { email: 42 }],
    ['ipAddress', { ipAddress: '256.1.1.1' }],
    ['ipAddress', { ipAddress: '01.2.3.4' }],
    ['ipAddress', { ipAddress: 'fe80::1%eth0' }],
    ['ipAddress', { ipAddress: 'example.com' }],
    ['ipAddress', { ipAddress: ' 1.2.3.4' }],
    ['card.bin', { card: { bin: '41111' } }],
    ['card.bin', { card: { bin: '411111111' } }],
    ['card.bin', { card: { bin: 411111 } }],
    ['card.last4', { card: { last4: '111' } }],
    ['card.last4', { card: { last4: '1a11' } }],
    ['card.fingerprint', { card: { fingerprint: '' } }],
    ['card.fingerprint', { card: { fingerprint: 'x'.repeat(129) } }],
    ['card', { card: 'fp_1' }],
    ['billingAddress.country', { billingAddress: { country: 'fr' } }],
    ['billingAddress.country', { billingAddress: { postalCode: '75011' } }],
    ['shippingAddress.postalCode', { shippingAddress: { country: 'FR', postalCode: 'x'.repeat(17) } }],
    ['shippingAddress.postalCode', { shippingAddress: { country: 'FR', postalCode: '750\t11' } }],
    ['userAgent', { userAgent: 'x'.repeat(513) }],
    ['userAgent', { userAgent: 'Mozilla/5.0\r\nX-Injected: 1' }],
    ['userAgent', { userAgent: '' }],
    ['metadata', { metadata: ['a'] }],
    ['metadata', { metadata: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])) }],
    ['metadata.nested', { metadata: { nested: { a: 1 } } }],
    ['metadata.nothing', { metadata: { nothing: null } }],
    ['metadata.long', { metadata: { long: 'x'.repeat(257) } }],
    ['metadata.nan', { metadata: { nan: Number.NaN } }],
    ['metadata.inf', { metadata: { inf: Number.POSITIVE_INFINITY } }],
    [`metadata.${'k'.repeat(65)}`, { metadata: { ['k'.repeat(65)]: 1 } }],
    ['metadata.', { metadata: { '': 1 } }],
    ['metadata.a\nb', { metadata: { 'a\nb': 1 } }],
    ['metadata.nul', { metadata: { nul: 'a\u0000b' } }],
  ];
  for (const [path, fields] of bad)
    it(`refuses ${path} = ${JSON.stringify(Object.values(fields)[0])?.slice(0, 40)} naming it`, () => {
      const errors = errorsOf(richEvent(fields));
      assert.deepEqual(
        errors.map((e) => e.path),
        [path],
      );
      assert.ok(!(errors[0]?.message ?? '').includes('jane'), 'the message never echoes the value');
    });

  it('refuses a __proto__ metadata key naming it, never drops it silently', () => {
    const body = JSON.parse('{"metadata":{"__proto__":{"x":1},"ok":1}}') as Record<string, unknown>;
    assert.deepEqual(paths(richEvent(body)), ['metadata.__proto__']);
  });

  it('keeps metadata at the bounds: 32 keys, 64-character keys, 256-character values, free text', () => {
    const m = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`${'k'.repeat(60)}${i}`, 'v'.repeat(256)]));
    assert.equal(Object.keys(parsePaymentEvent(richEvent({ metadata: m })).metadata ?? {}).length, 32);
    assert.equal(parsePaymentEvent(richEvent({ metadata: { n: 'a\tb\nc' } })).metadata?.['n'], 'a\tb\nc');
  });

  it('refuses unknown fields at the top, in card and in the addresses', () => {
    assert.deepEqual(paths(richEvent({ cardNumber: '4111111111111111' })), ['cardNumber']);
    assert.deepEqual(paths(richEvent({ card: { bin: '411111', number: '4111111111111111' } })), ['card.number']);
    assert.deepEqual(paths(richEvent({ card: { cvv: '123' } })), ['card.cvv']);
    assert.deepEqual(paths(richEvent({ billingAddress: { country: 'FR', street: '1 rue X' } })), [
      'billingAddress.street',
    ]);
    assert.deepEqual(paths(richEvent({ shippingAddress: { country: 'FR', city: 'Paris' } })), ['shippingAddress.city']);
  });

  it('names every bad field at once', () => {
    assert.deepEqual(
      paths(richEvent({ email: 'x', ipAddress: 'y', card: { bin: '1' }, metadata: { a: null, b: {} } })).sort(),
      ['card.bin', 'email', 'ipAddress', 'metadata.a', 'metadata.b'],
    );
  });
});

describe('payment event: fraud-signal fields (properties)', () => {
  const localPart = fc.stringMatching(/^[A-Za-z0-9_%+-]{1,12}(\.[A-Za-z0-9_%+-]{1,12})?$/);
  const domain = fc.stringMatching(/^([A-Za-z0-9]{1,12}\.){1,3}[A-Za-z]{2,8}$/);
  const valid = fc.record(
    {
      email: fc.tuple(localPart, domain).map(([l, d]) => `${l}@${d}`),
      ipAddress: fc.oneof(fc.ipV4(), fc.ipV6()),
      card: fc.record(
        {
          bin: fc.stringMatching(/^\d{6,8}$/),
          last4: fc.stringMatching(/^\d{4}$/),
          fingerprint: fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,11}$/),
        },
        { requiredKeys: [] },
      ),
      billingAddress: fc.record(
        { country: fc.constantFrom('FR', 'DE', 'US', 'GB'), postalCode: fc.stringMatching(/^[A-Z0-9 -]{1,10}$/) },
        { requiredKeys: ['country'] },
      ),
      userAgent: fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map(String.fromCharCode), maxLength: 12 }),
      metadata: fc.dictionary(
        fc.stringMatching(/^[a-z][a-z0-9_.]{0,20}$/),
        fc.oneof(
          fc.string({ maxLength: 12 }).filter((s) => !/[\u0000-\u001f\u007f-\u009f]/.test(s)),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.boolean(),
        ),
        { maxKeys: 32 },
      ),
    },
    { requiredKeys: [] },
  );

  it('valid new fields parse, email and IP come back canonical', () => {
    fc.assert(
      fc.property(valid, (fields) => {
        const f = { ...fields } as Record<string, unknown>;
        if (f['userAgent'] === '') delete f['userAgent'];
        const e = parsePaymentEvent(richEvent({ email: undefined, ipAddress: undefined, card: undefined, ...f }));
        if (fields.email !== undefined) {
          const at = fields.email.indexOf('@');
          assert.equal(e.email, fields.email.slice(0, at) + fields.email.slice(at).toLowerCase());
        }
        if (fields.ipAddress !== undefined) {
          assert.equal(isIP(e.ipAddress ?? ''), isIP(fields.ipAddress));
          assert.equal(canonicalIp(e.ipAddress ?? ''), e.ipAddress, 'canonical form is a fixed point');
        }
      }),
    );
  });

  it('IPv6 spellings of one address give one canonical text', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (groups) => {
        const long = groups.map((g) => g.toString(16).padStart(4, '0').toUpperCase()).join(':');
        const short = groups.map((g) => g.toString(16)).join(':');
        assert.equal(canonicalIp(long), canonicalIp(short));
      }),
    );
  });

  it('a bad BIN or last 4 is refused, naming it', () => {
    const notBin = fc.string({ maxLength: 10 }).filter((s) => !/^\d{6,8}$/.test(s));
    const notLast4 = fc.string({ maxLength: 6 }).filter((s) => !/^\d{4}$/.test(s));
    fc.assert(
      fc.property(notBin, notLast4, (bin, last4) => {
        assert.deepEqual(paths(richEvent({ card: { bin, last4 } })).sort(), ['card.bin', 'card.last4']);
      }),
    );
  });

  const carriers: [string, (p: string) => Record<string, unknown>][] = [
    ['card.fingerprint', (p) => ({ card: { fingerprint: p } })],
    ['card.fingerprint', (p) => ({ card: { fingerprint: `tok_${p}` } })],
    ['cardFingerprint', (p) => ({ card: undefined, cardFingerprint: p })],
    ['userAgent', (p) => ({ userAgent: `Mozilla/5.0 ${p} Safari` })],
    ['email', (p) => ({ email: `${p.replace(/ /g, '-')}@example.com` })],
    ['billingAddress.postalCode', (p) => ({ billingAddress: { country: 'FR', postalCode: p.slice(0, 16) } })],
    ['metadata.ref', (p) => ({ metadata: { ref: `card ${p} on file` } })],
    ['metadata.ref', (p) => ({ metadata: { ref: p } })],
    [`metadata.`, (p) => ({ metadata: { [p]: 1 } })],
  ];

  it('a card number is refused in every string field that could carry one, naming the field', () => {
    fc.assert(
      fc.property(pan, fc.constantFrom(...carriers), (p, [path, put]) => {
        const fields = put(p);
        if (path === 'billingAddress.postalCode' && p.length > 16) return; // longer: refused for its length
        const errors = errorsOf(richEvent(fields));
        const expected = path === 'metadata.' ? `metadata.${p}` : path;
        assert.deepEqual(
          errors.map((e) => e.path),
          [expected],
        );
        assert.match(errors[0]?.message ?? '', /card number/);
        assert.ok(!(errors[0]?.message ?? '').includes(p.replace(/[ -]/g, '').slice(0, 13)), 'never echoed');
      }),
    );
  });

  it('containsCardNumber finds a PAN in text and lets ordinary numbers through', () => {
    fc.assert(
      fc.property(pan, fc.string({ maxLength: 20 }), (p, s) => {
        const clean = s.replace(/\d/g, 'x');
        assert.ok(containsCardNumber(`${clean} ${p} ${clean}`));
      }),
    );
    assert.equal(containsCardNumber('order 12345, 3 items, 2026-12-01'), false);
    assert.equal(containsCardNumber('Chrome/131.0.6778.86'), false);
    assert.equal(containsCardNumber('Mozilla/5.0 4111 1111 1111 1111'), true, 'a run starting with the 0 of 5.0');
    assert.equal(containsCardNumber('411 111 111 111 1111'), true, 'groups of three');
  });
});
