/**
 * The one keyed hash (lib/platform/keyed-hash.ts): HMAC-SHA256 in each form the service writes (the learning loop's
 * `h_` + 32, the prompt's `u_` + 16, the spans' 32 bare digits), memoized or not, whatever was hashed before.
 */
import * as assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import * as fc from 'fast-check';
import { hashUserId as promptUser } from '../../lib/escalation/prompt';
import { HASH_PREFIX, ID_HASH, KeyedHash, keyedHash, type KeyedHashForm } from '../../lib/platform/keyed-hash';

const reference = (key: string, value: string, digits = 32, prefix = HASH_PREFIX): string =>
  prefix + createHmac('sha256', Buffer.from(key, 'utf8')).update(value, 'utf8').digest('hex').slice(0, digits);

const form: fc.Arbitrary<KeyedHashForm> = fc.record({
  prefix: fc.constantFrom('', 'h_', 'u_'),
  hexDigits: fc.integer({ min: 1, max: 32 }).map((n) => n * 2),
});

test('a memoized keyed hash is the HMAC of the value, whatever was hashed before and evicted (property)', () => {
  fc.assert(
    fc.property(
      fc.string({ minLength: 16 }),
      fc.integer({ min: 0, max: 4 }),
      fc.array(fc.string({ maxLength: 12 }), { maxLength: 60 }),
      form,
      (key, memoMax, values, f) => {
        const h = new KeyedHash(key, memoMax, f);
        for (const v of values)
          assert.equal(h.of(v), reference(key, v, f.hexDigits, f.prefix), `hash of ${JSON.stringify(v)}`);
      },
    ),
  );
});

test('the default form is the learning loop’s (h_ + 32 hex digits); the prompt’s user is u_ + 16', () => {
  fc.assert(
    fc.property(fc.string({ minLength: 1 }), fc.string(), (key, value) => {
      assert.equal(new KeyedHash(key).of(value), reference(key, value));
      assert.equal(keyedHash(key, value), reference(key, value));
      assert.match(keyedHash(key, value, ID_HASH), /^h_[0-9a-f]{32}$/);
      assert.equal(promptUser(value, key), reference(key, value, 16, 'u_'));
    }),
  );
});

test('two keys never share a memo: the same value hashes differently under another key', () => {
  const a = new KeyedHash('key-number-one-0123456789');
  const b = new KeyedHash('key-number-two-0123456789');
  assert.equal(a.of('user-1'), a.of('user-1'));
  assert.notEqual(a.of('user-1'), b.of('user-1'));
});

test('a form with an odd or out-of-range number of digits is refused', () => {
  for (const hexDigits of [0, 3, 66, Number.NaN])
    assert.throws(() => new KeyedHash('k', 0, { prefix: '', hexDigits }), /hexDigits must be an even number/);
});
