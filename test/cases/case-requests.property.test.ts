/**
 * The case API's input parsing (pure): any query gives a parsed query or `validation_failed` naming only
 * parameters that exist, never another error; a cursor round-trips, and any other string is refused naming
 * `cursor`; any body gives a verdict or `validation_failed`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeCaseCursor, parseCaseListQuery, parseVerdictBody } from '../../lib/cases/case-requests';
import { AppError } from '../../lib/errors/errors';

const PARAMS = ['status', 'rule', 'merchantId', 'minScore', 'olderThan', 'order', 'cursor'];

function query(q: Record<string, string>): { get(name: string): string | null } {
  return { get: (n) => q[n] ?? null };
}

function validationOnly(fn: () => unknown, allowed: readonly string[]): void {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError && err.code === 'validation_failed', `unexpected ${String(err)}`);
    assert.ok(err.errors.length > 0);
    for (const e of err.errors)
      assert.ok(
        allowed.some((a) => e.path === a || e.path.startsWith(`${a}.`)),
        e.path,
      );
  }
}

describe('case API input parsing', () => {
  it('property: any query parses or is refused naming only its bad parameters', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...PARAMS), fc.string({ maxLength: 60 })), (q) =>
        validationOnly(() => parseCaseListQuery(query(q)), Object.keys(q)),
      ),
      { numRuns: 500 },
    );
  });

  it('property: a cursor this endpoint made round-trips; any other string is refused naming cursor', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2000-01-01Z'), max: new Date('2100-01-01Z'), noInvalidDate: true }),
        fc.bigInt({ min: 1n, max: 999_999_999_999n }),
        fc.constantFrom('oldest' as const, 'newest' as const),
        (d, id, order) => {
          const pos = { decidedAt: d.toISOString(), id: id.toString() };
          const parsed = parseCaseListQuery(query({ cursor: encodeCaseCursor(pos, order), order }));
          assert.deepEqual(parsed.after, pos);
        },
      ),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        if (s === '') return;
        assert.throws(
          () => parseCaseListQuery(query({ cursor: s })),
          (e) => e instanceof AppError && e.errors.some((x) => x.path === 'cursor'),
        );
      }),
      { numRuns: 500 },
    );
    // a cursor of one order is not one of the other
    const c = encodeCaseCursor({ decidedAt: '2026-12-01T00:00:00.000Z', id: '7' }, 'oldest');
    assert.throws(() => parseCaseListQuery(query({ cursor: c, order: 'newest' })), AppError);
  });

  it('property: any body gives a verdict or validation_failed', () => {
    fc.assert(
      fc.property(fc.anything(), (body) =>
        validationOnly(
          () => parseVerdictBody(body),
          ['', 'verdict', 'reason', 'addToList'].concat(
            typeof body === 'object' && body !== null ? Object.keys(body) : [],
          ),
        ),
      ),
      { numRuns: 500 },
    );
  });
});
