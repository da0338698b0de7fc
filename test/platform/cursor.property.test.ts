/**
 * The cursor codec (lib/platform/cursor.ts): every position round-trips; a signed cursor changed anywhere is refused;
 * an unsigned one is refused or is exactly the cursor of what it reads as (one spelling per position); nothing throws.
 */
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import * as fc from 'fast-check';
import { CURSOR_MAX_CHARS, cursorCodec } from '../../lib/platform/cursor';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const any = (v: unknown): unknown => v;
/** Positions as the pages write them: small JSON values (what survives JSON as itself). */
const position = fc
  .jsonValue({ maxDepth: 2 })
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown)
  .filter((v) => JSON.stringify(v).length <= 150);

/** One change of a cursor: a character replaced, removed or added, or the end cut. */
type Edit = { kind: 'replace' | 'remove' | 'insert' | 'cut'; at: number; char: string };
const edit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('replace', 'remove', 'insert', 'cut'),
  at: fc.nat(),
  char: fc.constantFrom(...ALPHABET),
});
function applyEdit(s: string, e: Edit): string {
  const i = e.at % (s.length + (e.kind === 'insert' ? 1 : 0));
  if (e.kind === 'replace') return s.slice(0, i) + e.char + s.slice(i + 1);
  if (e.kind === 'remove') return s.slice(0, i) + s.slice(i + 1);
  if (e.kind === 'insert') return s.slice(0, i) + e.char + s.slice(i);
  return s.slice(0, i);
}

test('every position round-trips, signed or not (property)', () => {
  const plain = cursorCodec();
  const signed = cursorCodec({ key: 'cursor-test-key-0123456789' });
  fc.assert(
    fc.property(position, (p) => {
      for (const c of [plain, signed]) {
        const cursor = c.encode(p);
        assert.match(cursor, /^[A-Za-z0-9_-]+$/, 'a cursor travels in a URL as is');
        assert.deepEqual(c.decode(cursor, any), p);
      }
    }),
  );
});

test('a signed cursor changed anywhere is refused (property)', () => {
  const signed = cursorCodec({ key: 'cursor-test-key-0123456789' });
  fc.assert(
    fc.property(position, edit, (p, e) => {
      const cursor = signed.encode(p);
      const changed = applyEdit(cursor, e);
      fc.pre(changed !== cursor);
      assert.equal(signed.decode(changed, any), undefined, `${cursor} → ${changed}`);
    }),
  );
});

test('a cursor signed under another key is refused', () => {
  const a = cursorCodec({ key: 'key-a-0123456789' });
  const b = cursorCodec({ key: 'key-b-0123456789' });
  fc.assert(fc.property(position, (p) => assert.equal(b.decode(a.encode(p), any), undefined)));
});

test('an unsigned cursor changed anywhere is refused, or is exactly the cursor of what it reads as (property)', () => {
  const plain = cursorCodec();
  fc.assert(
    fc.property(position, edit, (p, e) => {
      const changed = applyEdit(plain.encode(p), e);
      const read = plain.decode(changed, any);
      if (read !== undefined) assert.equal(plain.encode(read), changed, 'one spelling per position');
    }),
  );
});

test('any text decodes to a position or to nothing, never a throw; the reader’s refusal and throw are refusals', () => {
  const plain = cursorCodec();
  const signed = cursorCodec({ key: 'k' });
  fc.assert(
    fc.property(fc.string({ maxLength: 400 }), (s) => {
      for (const c of [plain, signed]) {
        const read = c.decode(s, any);
        if (read !== undefined) assert.equal(c.encode(read), s);
      }
    }),
  );
  const cursor = plain.encode({ at: 1 });
  assert.equal(
    plain.decode(cursor, () => undefined),
    undefined,
  );
  assert.equal(
    plain.decode(cursor, () => {
      throw new Error('not a position');
    }),
    undefined,
  );
});

test('the unsigned form is the base64url of the JSON; longer than the bound is refused', () => {
  const plain = cursorCodec();
  const p = { d: '2026-12-01T08:00:00.000Z', i: '42', o: 'oldest' };
  assert.equal(plain.encode(p), Buffer.from(JSON.stringify(p), 'utf8').toString('base64url'));
  const long = plain.encode('x'.repeat(CURSOR_MAX_CHARS));
  assert.ok(long.length > CURSOR_MAX_CHARS);
  assert.equal(plain.decode(long, any), undefined);
  assert.equal(cursorCodec({ maxChars: 1000 }).decode(long, any), 'x'.repeat(CURSOR_MAX_CHARS));
});
