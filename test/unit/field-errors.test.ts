/**
 * The one mapping from zod issues to field errors (`fieldErrorsOf`, `inputFieldErrorsOf`) and `parseBody` over
 * it: examples, and a fast-check property that every unknown key is named once, by its full path.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { fieldErrorsOf, inputFieldErrorsOf } from '../../lib/errors/field-errors';
import { parseBody } from '../../lib/errors/parse-body';

const schema = z.strictObject({
  id: z
    .string()
    .min(3)
    .regex(/^[a-z]+$/),
  a: z.strictObject({ b: z.strictObject({ n: z.number() }) }).optional(),
  tags: z.array(z.string()).optional(),
});

function issues(value: unknown) {
  const r = schema.safeParse(value);
  assert.ok(!r.success, 'expected a failed parse');
  return r.error.issues;
}

describe('fieldErrorsOf', () => {
  it('names every issue by its dotted path, and each unknown key by its full path', () => {
    const errors = fieldErrorsOf(issues({ id: 'ok', x: 1, y: 2, a: { b: { n: 'one', extra: true } }, tags: ['t', 3] }));
    assert.deepEqual(errors.map((e) => e.path).sort(), ['a.b.extra', 'a.b.n', 'id', 'tags.1', 'x', 'y']);
    assert.deepEqual(
      errors
        .filter((e) => e.message === 'unknown field')
        .map((e) => e.path)
        .sort(),
      ['a.b.extra', 'x', 'y'],
    );
  });

  it('keeps every issue of a field, in order, and puts a prefix before each path', () => {
    const errors = fieldErrorsOf(issues({ id: 'A1', extra: 0 }), 'events.3');
    assert.deepEqual(
      errors.map((e) => e.path),
      ['events.3.id', 'events.3.id', 'events.3.extra'],
    );
  });
});

describe('inputFieldErrorsOf', () => {
  it('gives one error per field (the first) and says a missing top-level field is required', () => {
    const input = { id: 'A1', a: { b: {} }, extra: 0 };
    assert.deepEqual(inputFieldErrorsOf(issues(input), input, 'labels.0'), [
      { path: 'labels.0.id', message: 'Too small: expected string to have >=3 characters' },
      { path: 'labels.0.a.b.n', message: 'Invalid input: expected number, received undefined' },
      { path: 'labels.0.extra', message: 'unknown field' },
    ]);
    assert.deepEqual(inputFieldErrorsOf(issues({}), {}), [{ path: 'id', message: 'is required' }]);
  });
});

describe('parseBody', () => {
  it('throws validation_failed naming each unknown field separately', () => {
    assert.throws(() => parseBody(schema, { id: 'abc', x: 1, y: 2 }), {
      name: 'AppError',
      code: 'validation_failed',
      errors: [
        { path: 'x', message: 'unknown field' },
        { path: 'y', message: 'unknown field' },
      ],
    });
    assert.deepEqual(parseBody(schema, { id: 'abc' }), { id: 'abc' });
  });
});

describe('unknown keys (property)', () => {
  const known = new Set(['id', 'a', 'tags', 'b', 'n']);
  const key = fc.string({ maxLength: 6 }).filter((k) => !known.has(k) && k !== '__proto__');
  it('names each unknown key exactly once, at the top level and nested, under any prefix', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(key, { maxLength: 4 }),
        fc.uniqueArray(key, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('', 'events.0', 'labels.12'),
        (top, nested, prefix) => {
          const value: Record<string, unknown> = { id: 'abc', a: { b: { n: 1 } } };
          const inner = (value['a'] as { b: Record<string, unknown> }).b;
          for (const k of top) value[k] = 1;
          for (const k of nested) inner[k] = 1;
          const at = (p: string) => (prefix === '' ? p : `${prefix}.${p}`);
          const expected = [...top.map(at), ...nested.map((k) => at(`a.b.${k}`))].sort();
          for (const errors of [
            fieldErrorsOf(issues(value), prefix),
            inputFieldErrorsOf(issues(value), value, prefix),
          ]) {
            assert.ok(errors.every((e) => e.message === 'unknown field'));
            assert.deepEqual(errors.map((e) => e.path).sort(), expected);
          }
        },
      ),
    );
  });
});
