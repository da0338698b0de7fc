/** The opaque `?cursor=` of `GET /api/lists/{name}`: what it hands out reads back; anything else is refused. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AppError } from '../../lib/errors/errors';
import { decodeListCursor, encodeListCursor } from '../../lib/decisioning/list-values';

describe('list page cursor', () => {
  it('a cursor the endpoint returned reads back as its value', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 128 }), (v) => {
        assert.equal(decodeListCursor('userId', encodeListCursor(v)), v);
      }),
    );
  });

  it('no cursor (absent or empty) is the first page', () => {
    assert.equal(decodeListCursor('userId', undefined), undefined);
    assert.equal(decodeListCursor('userId', ''), undefined);
  });

  for (const bad of ['%%%garbage', 'a b', 'YQ=', 'YR', ''.padEnd(300, 'A')]) {
    it(`refuses ${JSON.stringify(bad)}, naming cursor`, () => {
      assert.throws(
        () => decodeListCursor('userId', bad),
        (e: unknown) =>
          e instanceof AppError && e.code === 'validation_failed' && e.errors.some((f) => f.path === 'cursor'),
      );
    });
  }
});
