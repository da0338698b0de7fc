/** Helpers of the Open Inference Protocol tests: the protocol error's check and the generated test models. */
import assert from 'node:assert/strict';
import { buildPassThroughModel, type PassThrough } from '../../lib/training/onnx-writer';
import type { HttpAnswer } from '../support/http';

/** Asserts a protocol error: the status, `content-type: application/json`, and a body of exactly `{ error }` matching `pattern`. */
export function assertError(r: HttpAnswer, status: number, pattern: RegExp, label = ''): void {
  const shown = `${label} ${JSON.stringify(r.json)}`;
  assert.equal(r.status, status, shown);
  assert.match(r.type, /^application\/json/, shown);
  assert.deepEqual(Object.keys(r.json), ['error'], shown);
  assert.match(r.json['error'] as string, pattern, shown);
}

/** ONNX element types of the supported datatypes. */
export const ELEM_TYPES = {
  BOOL: 9,
  UINT8: 2,
  UINT16: 4,
  UINT32: 12,
  UINT64: 13,
  INT8: 3,
  INT16: 5,
  INT32: 6,
  INT64: 7,
  FP32: 1,
  FP64: 11,
} as const;

/**
 * The `types` model: for every supported datatype D, input `in_D` `[N, 3]` passed through to `out_D`; plus
 * `cast_in` (INT32 `[N, 2]`) cast to `cast_out` (FP64).
 */
export function typesModel(): Uint8Array {
  const tensors: PassThrough[] = Object.entries(ELEM_TYPES).map(([d, elemType]) => ({
    input: `in_${d}`,
    output: `out_${d}`,
    elemType,
    dims: ['N', 3],
  }));
  tensors.push({ input: 'cast_in', output: 'cast_out', elemType: 6, castTo: 11, dims: ['N', 2] });
  return buildPassThroughModel({ tensors, producer: 'test', docString: 'every supported datatype' });
}

/** The `echo` model: FP32 `x` `[N, 4]` passed through to `y`. */
export function echoModel(): Uint8Array {
  return buildPassThroughModel({
    tensors: [{ input: 'x', output: 'y', elemType: 1, dims: ['N', 4] }],
    producer: 'test',
    docString: 'echo',
  });
}

/** The `fixed` model: FP32 `m` `[2, 3]` (no batch axis) passed through to `n`. */
export function fixedModel(): Uint8Array {
  return buildPassThroughModel({
    tensors: [{ input: 'm', output: 'n', elemType: 1, dims: [2, 3] }],
    producer: 'test',
    docString: 'fixed shape',
  });
}
