import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AppError,
  describeProblemType,
  ERROR_CODES,
  problemHeaders,
  STATUS_BY_CODE,
  toAppError,
  toProblem,
} from '../../lib/errors/errors';

describe('error module', () => {
  it('maps every code to a status in one table', () => {
    for (const code of ERROR_CODES) assert.ok(STATUS_BY_CODE[code] >= 400 && STATUS_BY_CODE[code] < 600, code);
    assert.equal(new AppError('validation_failed', 'x').status, 400);
    assert.equal(new AppError('payload_too_large', 'x').status, 413);
    assert.equal(new AppError('unsupported_media_type', 'x').status, 415);
    assert.equal(new AppError('model_not_ready', 'x').status, 503);
    assert.equal(new AppError('overloaded', 'x').status, 503);
  });

  it('builds RFC 9457 problems with every field error', () => {
    const p = toProblem(
      new AppError('validation_failed', '2 invalid', {
        errors: [
          { path: 'a', message: 'm' },
          { path: 'b', message: 'n' },
        ],
      }),
      'inv-1',
    );
    assert.equal(p.status, 400);
    assert.equal(p.code, 'validation_failed');
    assert.equal(p.type, '/api/problems/validation_failed');
    assert.equal(p.title, 'Request validation failed');
    assert.equal(p.detail, '2 invalid');
    assert.equal(p.instance, 'inv-1');
    assert.equal(p.errors?.length, 2);
  });

  it('hides unexpected errors behind a generic internal problem', () => {
    const p = toProblem(new Error('secret=hunter2 at db'));
    assert.equal(p.status, 500);
    assert.equal(p.code, 'internal');
    assert.ok(!JSON.stringify(p).includes('hunter2'));
    assert.equal(toAppError(new TypeError('x')).transient, true);
  });

  it('sets Retry-After on 503s and problem content type always', () => {
    assert.equal(problemHeaders(new AppError('overloaded', 'x', { retryAfterSec: 2.2 }))['retry-after'], '3');
    assert.equal(problemHeaders(new AppError('model_not_ready', 'x'))['retry-after'], '1');
    const h = problemHeaders(new AppError('invalid_json', 'x'));
    assert.equal(h['content-type'], 'application/problem+json');
    assert.equal(h['retry-after'], undefined);
  });

  it('marks 503 codes transient and client errors permanent by default', () => {
    assert.equal(new AppError('overloaded', 'x').transient, true);
    assert.equal(new AppError('validation_failed', 'x').transient, false);
  });

  it('points every problem type at a route of this app, never at a domain it does not own', () => {
    for (const code of ERROR_CODES) {
      const type = toProblem(new AppError(code, 'x')).type;
      assert.equal(type, `/api/problems/${code}`);
      assert.equal(
        new URL(type, 'https://fraud.example.net/api/score').href,
        `https://fraud.example.net/api/problems/${code}`,
      );
      const d = describeProblemType(code);
      assert.deepEqual([d.type, d.code, d.status], [type, code, STATUS_BY_CODE[code]]);
      assert.ok(d.description.length > 10, code);
    }
    assert.throws(
      () => describeProblemType('nope'),
      (e: unknown) => e instanceof AppError && e.code === 'not_found',
    );
  });
});
