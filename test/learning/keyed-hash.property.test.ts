import * as assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import * as fc from 'fast-check';
import { HASH_PREFIX, KeyedHash } from '../../lib/platform/keyed-hash';

const reference = (key: string, value: string): string =>
  HASH_PREFIX + createHmac('sha256', Buffer.from(key, 'utf8')).update(value, 'utf8').digest('hex').slice(0, 32);

test('a memoized keyed hash is the HMAC of the value, whatever was hashed before and evicted (property)', () => {
  fc.assert(
    fc.property(
      fc.string({ minLength: 16 }),
      fc.integer({ min: 0, max: 4 }),
      fc.array(fc.string({ maxLength: 12 }), { maxLength: 60 }),
      (key, memoMax, values) => {
        const h = new KeyedHash(key, memoMax);
        for (const v of values) assert.equal(h.of(v), reference(key, v), `hash of ${JSON.stringify(v)}`);
      },
    ),
  );
});

test('two keys never share a memo: the same value hashes differently under another key', () => {
  const a = new KeyedHash('key-number-one-0123456789');
  const b = new KeyedHash('key-number-two-0123456789');
  assert.equal(a.of('user-1'), a.of('user-1'));
  assert.notEqual(a.of('user-1'), b.of('user-1'));
});
