/**
 * `GET /api/audit`'s query parsing (pure): any query string gives a query within its bounds, or `validation_failed`
 * naming only the parameters it has, never another error; good values parse to what they say; a cursor round-trips.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AppError } from '../../lib/errors/errors';
import {
  AUDIT_DEFAULT_LIMIT,
  AUDIT_MAX_LIMIT,
  decodeAuditCursor,
  encodeAuditCursor,
  parseAuditQuery,
} from '../../lib/governance/audit-query';

const PARAMS = ['kind', 'name', 'actor', 'from', 'to', 'cursor', 'limit', 'other'];

describe('audit query parsing', () => {
  it('property: any query string parses within bounds or is refused naming only its parameters', () => {
    const value = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom(
        'list',
        'model',
        'ruleset',
        'case',
        '0',
        '1',
        '200',
        '201',
        '2026-12-01T10:00:00Z',
        '1764583200000',
      ),
      fc.integer({ min: -5, max: 2e12 }).map(String),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...PARAMS), value), { maxLength: 8 }), (pairs) => {
        const search = new URLSearchParams(pairs);
        const present = new Set(pairs.map(([k]) => k));
        try {
          const q = parseAuditQuery(search);
          assert.ok(q.limit >= 1 && q.limit <= AUDIT_MAX_LIMIT);
          if (q.from !== undefined && q.to !== undefined) assert.ok(q.from < q.to);
        } catch (err) {
          assert.ok(err instanceof AppError && err.code === 'validation_failed', `unexpected ${String(err)}`);
          assert.equal(err.status, 400);
          assert.ok(err.errors.length > 0);
          for (const e of err.errors) assert.ok(present.has(e.path) && e.path !== 'other', e.path);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('parses good values, defaults the page size, and names every bad parameter at once', () => {
    assert.deepEqual(parseAuditQuery(new URLSearchParams('')), { limit: AUDIT_DEFAULT_LIMIT });
    assert.deepEqual(
      parseAuditQuery(
        new URLSearchParams(
          'kind=list&name=blocked_users&actor=alice&from=2026-12-01T00:00:00Z&to=1796169600000&limit=10',
        ),
      ),
      {
        kind: 'list',
        name: 'blocked_users',
        actor: 'alice',
        from: Date.parse('2026-12-01T00:00:00Z'),
        to: 1796169600000,
        limit: 10,
      },
    );
    assert.throws(
      () =>
        parseAuditQuery(
          new URLSearchParams('kind=x&name=' + 'n'.repeat(300) + '&actor=&from=2026-13-45&to=no&cursor=%21&limit=201'),
        ),
      (e: unknown) =>
        e instanceof AppError &&
        e.code === 'validation_failed' &&
        JSON.stringify(e.errors.map((x) => x.path)) ===
          JSON.stringify(['kind', 'name', 'from', 'to', 'cursor', 'limit']),
    );
    assert.throws(
      () => parseAuditQuery(new URLSearchParams('from=2000&to=1000')),
      (e: unknown) => e instanceof AppError && e.errors.length === 1 && e.errors[0]?.path === 'to',
    );
  });

  it('property: a cursor round-trips; other strings are refused naming cursor', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4e12 }), fc.bigInt({ min: 1n, max: 999_999_999_999n }), (at, id) => {
        const c = encodeAuditCursor({ at, id: id.toString() });
        assert.deepEqual(decodeAuditCursor(c), { at, id: id.toString() });
        assert.equal(parseAuditQuery(new URLSearchParams({ cursor: c })).cursor, c);
      }),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 80 }), (s) => {
        if (decodeAuditCursor(s) !== undefined) return;
        assert.throws(
          () => parseAuditQuery(new URLSearchParams({ cursor: s })),
          (e: unknown) => e instanceof AppError && e.errors.length === 1 && e.errors[0]?.path === 'cursor',
        );
      }),
    );
  });
});
