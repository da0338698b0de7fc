/**
 * The case API's input parsing (pure): any query gives a parsed query or `validation_failed` naming only
 * parameters that exist, never another error; a parameter the route does not read, or one given twice, is refused
 * naming it; a cursor round-trips, and any other string is refused naming `cursor`; any body gives a verdict or
 * `validation_failed`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CASE_LIST_PARAMS,
  CASE_NEXT_PARAMS,
  CASE_SEARCH_PARAMS,
  encodeCaseCursor,
  parseAnalyticsQuery,
  parseCaseListQuery,
  parseNextQuery,
  parseVerdictBody,
  searchParams,
} from '../../lib/cases/case-requests';
import { AppError } from '../../lib/errors/errors';

const PARAMS = ['status', 'queue', 'rule', 'merchantId', 'minScore', 'assignee', 'olderThan', 'order', 'cursor'];

/** A query of `q`'s parameters, as URLSearchParams reads them. */
function query(q: Record<string, string>): URLSearchParams {
  return new URLSearchParams(Object.entries(q));
}

/** The errors `fn` throws (`validation_failed`), as `[path, message]`. */
function refusal(fn: () => unknown): [string, string][] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError && err.code === 'validation_failed', `unexpected ${String(err)}`);
    return err.errors.map((e) => [e.path, e.message]);
  }
  assert.fail('accepted');
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

  it('property: any parameter name other than those the route reads is refused, naming each once', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...PARAMS), fc.constantFrom('', 'open', 'oldest', '0.5')),
        fc.uniqueArray(
          fc.string({ minLength: 0, maxLength: 20 }).filter((k) => !PARAMS.includes(k)),
          { minLength: 1, maxLength: 5 },
        ),
        (known, unknown) => {
          const q = new URLSearchParams(Object.entries(known));
          for (const k of unknown) q.append(k, 'x');
          const errors = refusal(() => parseCaseListQuery(q));
          const named = errors.filter(([, m]) => m.startsWith('unknown query parameter')).map(([p]) => p);
          assert.deepEqual(named, [...new Set(unknown)]);
          for (const [p] of errors) assert.ok(PARAMS.includes(p) || unknown.includes(p), p);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses an unknown parameter, an empty one included, and a repeated one, naming them; accepts the rest', () => {
    assert.deepEqual(
      refusal(() => parseCaseListQuery(new URLSearchParams('status=open&assigned=me&limit='))),
      [
        ['assigned', 'unknown query parameter (this route reads ' + PARAMS.join(', ') + ')'],
        ['limit', 'unknown query parameter (this route reads ' + PARAMS.join(', ') + ')'],
      ],
    );
    assert.deepEqual(
      refusal(() => parseCaseListQuery(new URLSearchParams('status=open&status=closed&Status=open&status=x'))),
      [
        ['status', 'must be given once'],
        ['Status', 'unknown query parameter (this route reads ' + PARAMS.join(', ') + ')'],
      ],
      'names are case-sensitive; a repeat is named once',
    );
    const q = parseCaseListQuery(
      new URLSearchParams('status=assigned&rule=velocity-burst&merchantId=m-1&minScore=0.5&order=oldest&olderThan='),
    );
    assert.deepEqual(q, {
      filter: { status: 'assigned', rule: 'velocity-burst', merchantId: 'm-1', minScore: 0.5 },
      order: 'oldest',
    });
    assert.deepEqual(parseCaseListQuery(new URLSearchParams('')), { filter: {}, order: 'newest' });
    assert.deepEqual(parseCaseListQuery(new URLSearchParams('queue=high-value&assignee=me')), {
      filter: { queue: 'high-value', assignee: 'me' },
      order: 'newest',
    });
    // the search's ids travel in a body (POST /api/cases/search), never in a URL: GET refuses them
    assert.deepEqual(
      refusal(() => parseCaseListQuery(new URLSearchParams('userId=u-1'))).map(([p]) => p),
      ['userId'],
    );
    assert.deepEqual(parseCaseListQuery(searchParams({ transactionId: 'tx-1', userId: 'u-1' }), CASE_SEARCH_PARAMS), {
      filter: { transactionId: 'tx-1', userId: 'u-1' },
      order: 'newest',
    });
    assert.deepEqual(
      refusal(() => parseCaseListQuery(searchParams({ userId: 'u'.repeat(129) }), CASE_SEARCH_PARAMS)),
      [['userId', 'must be an id as a payment has it (1 to 128 characters)']],
    );
    assert.deepEqual(
      refusal(() => searchParams({ userId: 7, status: 'open', other: null })),
      [
        ['userId', 'must be a string'],
        ['other', 'must be a string'],
      ],
    );
    assert.deepEqual(CASE_LIST_PARAMS, PARAMS);
  });

  it("take next reads the list's filters (queue, rule, merchantId, minScore) and refuses any other parameter", () => {
    assert.deepEqual(
      parseNextQuery(new URLSearchParams('queue=velocity&rule=velocity-burst&merchantId=m-1&minScore=0.25')),
      { queue: 'velocity', rule: 'velocity-burst', merchantId: 'm-1', minScore: 0.25 },
    );
    assert.deepEqual(parseNextQuery(new URLSearchParams('queue=')), {}, 'an empty value counts as absent');
    const reads = `unknown query parameter (this route reads ${CASE_NEXT_PARAMS.join(', ')})`;
    assert.deepEqual(
      refusal(() => parseNextQuery(new URLSearchParams('status=open&queue=a b&minScore=-1&assignee=me'))),
      [
        ['status', reads],
        ['assignee', reads],
        ['queue', 'must be 1 to 128 letters, digits or . : @ - _'],
        ['minScore', 'must be a number in [0, 1]'],
      ],
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...CASE_NEXT_PARAMS), fc.string({ maxLength: 40 })), (q) =>
        validationOnly(() => parseNextQuery(query(q)), Object.keys(q)),
      ),
      { numRuns: 300 },
    );
  });

  it('the analytics range: the last 7 days by default; from before to, at most 366 days; zones required', () => {
    const now = Date.parse('2026-12-06T08:00:00Z');
    assert.deepEqual(parseAnalyticsQuery(query({}), now), { from: now - 7 * 86_400_000, to: now });
    assert.deepEqual(
      parseAnalyticsQuery(query({ from: '2026-12-01T00:00:00Z', to: '2026-12-02T00:00:00+01:00' }), now),
      {
        from: Date.parse('2026-12-01T00:00:00Z'),
        to: Date.parse('2026-12-01T23:00:00Z'),
      },
    );
    assert.deepEqual(
      refusal(() => parseAnalyticsQuery(query({ from: '2026-12-01', to: 'x', queue: 'a' }), now)).map(([p]) => p),
      ['queue', 'to', 'from'],
    );
    assert.deepEqual(
      refusal(() => parseAnalyticsQuery(query({ from: '2026-12-02T00:00:00Z', to: '2026-12-01T00:00:00Z' }), now)),
      [['from', 'must be before to']],
    );
    assert.deepEqual(
      refusal(() => parseAnalyticsQuery(query({ from: '2025-01-01T00:00:00Z', to: '2026-12-01T00:00:00Z' }), now)),
      [['from', 'must be at most 366 days before to']],
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
