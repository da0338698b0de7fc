/**
 * Text hygiene (lib/domain/text.ts), against an oracle written another way (regular expressions): any string with
 * a refused character (NUL and the C0 controls, DEL, C1, a lone surrogate; tab, CR and LF in identifiers) is
 * refused naming the first one's index, and clean strings pass; through a schema, the field is named.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { deepTextErrors, freeText, identifierString, textProblem, type TextKind } from '../../lib/domain/text';
import { AppError } from '../../lib/errors/errors';
import { parseBody } from '../../lib/errors/parse-body';
import { validEvent } from '../support/events';
import { z } from 'zod';

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
const LINE = /[\t\n\r]/;
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function oracleRefuses(s: string, kind: TextKind): boolean {
  return CONTROL.test(s) || LONE.test(s) || (kind === 'identifier' && LINE.test(s));
}

/** Any UTF-16 code unit, surrogates and controls included. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
/** Strings biased towards the interesting ranges. */
const edgyUnit = fc.oneof(
  anyUnit,
  fc.integer({ min: 0, max: 0x20 }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x7e, max: 0xa0 }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xd7ff, max: 0xe000 }).map((c) => String.fromCharCode(c)),
  fc.constantFrom('\uD83D\uDE00', 'é', 'a', ' '),
);
const anyString = fc.string({ unit: edgyUnit, maxLength: 40 });
/** Clean code points (printable, or a surrogate pair), for a string that must pass. */
const cleanPoint = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xa0, max: 0xd7ff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xe000, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
);
const cleanPoints = fc.array(cleanPoint, { maxLength: 30 });
/** One character refused in identifiers (and, but for tab/CR/LF, in free text). */
const badUnit = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x7f, max: 0x9f }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
);
const KINDS: readonly TextKind[] = ['identifier', 'freeText'];

describe('text hygiene', () => {
  it('property: refuses exactly what the oracle refuses, for both kinds', () => {
    fc.assert(
      fc.property(anyString, fc.constantFrom(...KINDS), (s, kind) => {
        assert.equal(textProblem(s, kind) !== undefined, oracleRefuses(s, kind), JSON.stringify(s));
      }),
      { numRuns: 5000 },
    );
  });

  it('property: clean strings pass; one bad character anywhere is refused naming its index', () => {
    fc.assert(
      fc.property(cleanPoints, badUnit, fc.nat(), (points, bad, at) => {
        const clean = points.join('');
        for (const kind of KINDS) assert.equal(textProblem(clean, kind), undefined, JSON.stringify(clean));
        const k = at % (points.length + 1);
        const before = points.slice(0, k).join('');
        const s = before + bad + points.slice(k).join('');
        const lineBreak = bad === '\t' || bad === '\n' || bad === '\r';
        assert.match(textProblem(s, 'identifier') ?? '', new RegExp(`\\(index ${before.length}\\)$`));
        if (lineBreak) assert.equal(textProblem(s, 'freeText'), undefined);
        else assert.match(textProblem(s, 'freeText') ?? '', new RegExp(`\\(index ${before.length}\\)$`));
      }),
      { numRuns: 2000 },
    );
  });

  it('names NUL, the code point and never the value', () => {
    assert.equal(textProblem('ab\u0000', 'freeText'), 'must not contain control character U+0000 (NUL) (index 2)');
    assert.equal(textProblem('\u009b', 'freeText'), 'must not contain control character U+009B (index 0)');
    assert.equal(textProblem('x\uDC00', 'identifier'), 'must not contain an unpaired surrogate U+DC00 (index 1)');
    assert.equal(textProblem('x\uD800', 'identifier'), 'must not contain an unpaired surrogate U+D800 (index 1)');
    assert.equal(textProblem('a\tb', 'identifier'), 'must not contain control character U+0009 (index 1)');
    assert.equal(textProblem('a\tb\r\n', 'freeText'), undefined);
    assert.equal(textProblem('\uD83D\uDE00 ok', 'identifier'), undefined);
  });

  it('property: through a schema, the bad field is named and only it', () => {
    const schema = z.strictObject({ id: identifierString(), note: freeText({ max: 100 }).optional() });
    fc.assert(
      fc.property(cleanPoints, badUnit, fc.constantFrom('id', 'note'), (points, bad, field) => {
        const clean = `x${points.join('')}`.slice(0, 60);
        const body = { id: clean, note: clean, [field]: clean + bad };
        const refused = field === 'id' || !['\t', '\n', '\r'].includes(bad);
        try {
          parseBody(schema, body);
          assert.ok(!refused, 'accepted a refused character');
        } catch (err) {
          assert.ok(err instanceof AppError && err.code === 'validation_failed', String(err));
          assert.deepEqual(
            err.errors.map((e) => e.path),
            [field],
          );
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('property: NUL in any string field of a payment event is refused naming that field', () => {
    const event = validEvent({
      sessionId: 's-1',
      deviceId: 'd-1',
      cardFingerprint: 'fp-1',
      note: 'n',
      ipCountry: 'FR',
    });
    const fields = Object.keys(event).filter((k) => typeof event[k] === 'string');
    fc.assert(
      fc.property(fc.constantFrom(...fields), badUnit, (field, bad) => {
        const value = `${String(event[field])}${bad}`;
        const note = field === 'note' && ['\t', '\n', '\r'].includes(bad);
        try {
          parsePaymentEvent({ ...event, [field]: value }, 'events.4');
          assert.ok(note, `accepted ${JSON.stringify(value)} in ${field}`);
        } catch (err) {
          assert.ok(err instanceof AppError && err.code === 'validation_failed', String(err));
          assert.deepEqual(
            err.errors.map((e) => e.path),
            [`events.4.${field}`],
          );
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('checks every key and string of a document, iteratively', () => {
    const doc = { a: ['ok', 'b\u0000'], 'k\u0001': 1, n: { t: 'line\nbreak', u: '\uDFFF' } };
    assert.deepEqual(
      deepTextErrors(doc).map((e) => e.path),
      ['a.1', 'k\u0001', 'n.u'],
    );
    let deep: unknown = 'bad\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.equal(deepTextErrors(deep).length, 1, 'a deep document does not overflow the stack');
  });
});
