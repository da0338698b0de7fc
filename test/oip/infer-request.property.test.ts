/** Properties of the protocol's pure parsing: flat vs nested data, shapes, datatypes, bad elements, forbidden keys. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AppError } from '../../lib/errors/errors';
import {
  datatypeOfOnnx,
  datatypeOfTensor,
  OIP_DATATYPES,
  tensorTypeOf,
  type OipDatatype,
} from '../../lib/oip/datatypes';
import { parseInferRequest, type ModelView } from '../../lib/oip/infer-request';
import { outputJson } from '../../lib/oip/tensor-json';
import { ELEM_TYPES } from './support';

/** A one-input model of `datatype` with dims `dims` (`undefined` = dynamic). */
const model = (datatype: string, dims: (number | undefined)[]): ModelView => ({
  inputs: [{ name: 'x', datatype, dims }],
  outputs: [{ name: 'y', datatype, dims }],
});

const problems = (body: unknown, m: ModelView): { path: string; message: string }[] => {
  try {
    parseInferRequest(body, m);
  } catch (err) {
    assert.ok(err instanceof AppError, `not an AppError: ${String(err)}`);
    assert.equal(err.code, 'validation_failed');
    return [...err.errors];
  }
  return [];
};

/** Nests a flat array to `dims` (row-major). */
function nest(flat: readonly unknown[], dims: readonly number[]): unknown {
  if (dims.length <= 1) return [...flat];
  const [, ...rest] = dims;
  const size = rest.reduce((a, b) => a * b, 1);
  return Array.from({ length: dims[0] as number }, (_, i) => nest(flat.slice(i * size, (i + 1) * size), rest));
}

/** A valid element of each datatype. */
const element = (d: OipDatatype): fc.Arbitrary<unknown> => {
  switch (d) {
    case 'BOOL':
      return fc.boolean();
    case 'INT8':
      return fc.integer({ min: -128, max: 127 });
    case 'INT16':
      return fc.integer({ min: -32768, max: 32767 });
    case 'INT32':
      return fc.integer({ min: -2147483648, max: 2147483647 });
    case 'INT64':
      return fc.maxSafeInteger();
    case 'UINT8':
      return fc.integer({ min: 0, max: 255 });
    case 'UINT16':
      return fc.integer({ min: 0, max: 65535 });
    case 'UINT32':
      return fc.integer({ min: 0, max: 4294967295 });
    case 'UINT64':
      return fc.maxSafeNat();
    case 'FP32':
      return fc.float({ noNaN: true, noDefaultInfinity: true });
    case 'FP64':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
  }
};

const shapeArb = fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 });

describe('OIP request parsing (property)', () => {
  it('data nested to the shape parses exactly like flat data, and round-trips through the output encoding', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...OIP_DATATYPES).chain((d) =>
          shapeArb.chain((dims) => {
            const size = dims.reduce((x, y) => x * y, 1);
            return fc.tuple(
              fc.constant(d),
              fc.constant(dims),
              fc.array(element(d), { minLength: size, maxLength: size }),
            );
          }),
        ),
        ([d, dims, flat]) => {
          const m = model(d, [undefined, ...dims.slice(1)]);
          const a = parseInferRequest({ inputs: [{ name: 'x', shape: dims, datatype: d, data: flat }] }, m);
          const b = parseInferRequest({ inputs: [{ name: 'x', shape: dims, datatype: d, data: nest(flat, dims) }] }, m);
          assert.deepEqual(a, b);
          const t = a.request.inputs[0];
          assert.ok(t !== undefined);
          assert.equal(a.request.rows, dims[0]);
          const back = outputJson(t);
          const expected = d === 'FP32' ? flat.map((x) => Math.fround(x as number)) : flat;
          assert.deepEqual([back.datatype, back.shape, back.data], [d, dims, expected]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a shape that does not match the data is a validation error naming the input, whatever its size', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constant(1e9), fc.constant(2 ** 53 - 1)), {
          minLength: 2,
          maxLength: 5,
        }),
        fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 20 }),
        (dims, data) => {
          fc.pre(dims.reduce((a, b) => a * b, 1) !== data.length);
          const p = problems(
            { inputs: [{ name: 'x', shape: dims, datatype: 'FP64', data }] },
            model(
              'FP64',
              dims.map(() => undefined),
            ),
          );
          assert.ok(p.length > 0 && p.every((e) => e.path.startsWith('inputs.0.')), JSON.stringify(p));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses negative, fractional and non-numeric dims', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ max: -1 }), fc.double({ noInteger: true }), fc.string(), fc.constant(null), fc.boolean()),
        fc.nat({ max: 2 }),
        (bad, at) => {
          const dims: unknown[] = [1, 1, 1];
          dims[at] = bad;
          const p = problems(
            { inputs: [{ name: 'x', shape: dims, datatype: 'FP32', data: [0] }] },
            model('FP32', [undefined, undefined, undefined]),
          );
          assert.deepEqual(p, [{ path: 'inputs.0.shape', message: 'must be a list of non-negative integers' }]);
        },
      ),
    );
  });

  it('names the index of the first element that is not of the datatype', () => {
    const bad = (d: OipDatatype): fc.Arbitrary<unknown> =>
      fc.oneof(
        fc.constant('abc'),
        fc.constant('NaN'),
        fc.constant(null),
        fc.constant({}),
        fc.constant([]).map(() => ({ nested: true })),
        ...(d === 'BOOL' ? [fc.integer()] : [fc.boolean()]),
        ...(d.startsWith('INT') || d.startsWith('UINT') ? [fc.constant(0.5), fc.constant(1e20)] : []),
        ...(d.startsWith('UINT') ? [fc.constant(-1)] : []),
        ...(d === 'FP32' ? [fc.constant(1e39)] : []),
      );
    fc.assert(
      fc.property(
        fc
          .constantFrom(...OIP_DATATYPES)
          .chain((d) =>
            fc.tuple(fc.constant(d), fc.array(element(d), { minLength: 6, maxLength: 6 }), bad(d), fc.nat({ max: 5 })),
          ),
        ([d, data, wrong, at]) => {
          const withBad = [...data];
          withBad[at] = wrong;
          const p = problems(
            { inputs: [{ name: 'x', shape: [2, 3], datatype: d, data: withBad }] },
            model(d, [undefined, 3]),
          );
          assert.equal(p.length, 1, JSON.stringify(p));
          assert.equal(p[0]?.path, `inputs.0.data.${at}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses __proto__, constructor and prototype keys wherever they appear, without polluting prototypes', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('__proto__', 'constructor', 'prototype'),
        fc.constantFrom('top', 'parameters', 'input', 'inputParameters', 'output'),
        (key, where) => {
          const input = `{"name":"x","shape":[1,1],"datatype":"FP32","data":[1]${where === 'input' ? `,"${key}":{"polluted":1}` : ''}${where === 'inputParameters' ? `,"parameters":{"${key}":1}` : ''}}`;
          const text = `{${where === 'top' ? `"${key}":{"polluted":1},` : ''}${where === 'parameters' ? `"parameters":{"${key}":1},` : ''}"inputs":[${input}]${where === 'output' ? `,"outputs":[{"name":"y","${key}":{"polluted":1}}]` : ''}}`;
          const p = problems(JSON.parse(text), model('FP32', [undefined, 1]));
          assert.equal(p.length, 1, JSON.stringify(p));
          assert.ok(p[0]?.path.endsWith(key) && p[0].message === 'is a forbidden key', JSON.stringify(p));
          assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
        },
      ),
    );
  });

  it('maps every datatype to one engine type and one ONNX element type, both ways', () => {
    for (const d of OIP_DATATYPES) {
      assert.equal(datatypeOfTensor(tensorTypeOf(d)), d);
      assert.equal(datatypeOfOnnx(ELEM_TYPES[d]), d);
    }
    assert.deepEqual(
      [datatypeOfOnnx(10), datatypeOfOnnx(8), datatypeOfOnnx(16), datatypeOfOnnx(99)],
      ['FP16', 'BYTES', 'BF16', undefined],
    );
  });
});
