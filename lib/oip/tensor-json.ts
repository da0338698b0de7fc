/**
 * Tensor data as the Open Inference Protocol writes it in JSON: shapes, flat or nested row-major `data`,
 * element conversion per datatype, and the response encoding. Pure; every check is bounded by the size of
 * the data actually sent (a shape like `[1e9, 17]` with a few values is refused without allocating).
 */
import { allocate, type NamedTensor, type TensorData } from '../inference/tensor';
import { datatypeOfTensor, tensorTypeOf, type OipDatatype } from './datatypes';

/** Integer ranges of the integer datatypes (64-bit ones limited to what a JSON number holds exactly). */
const INT_RANGE: Partial<Record<OipDatatype, readonly [number, number]>> = {
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  INT32: [-2147483648, 2147483647],
  INT64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  UINT8: [0, 255],
  UINT16: [0, 65535],
  UINT32: [0, 4294967295],
  UINT64: [0, Number.MAX_SAFE_INTEGER],
};

/** Largest finite float32. */
const FP32_MAX = 3.4028234663852886e38;

/**
 * Reads a shape: a list of non-negative safe integers.
 * @returns the dims, or the problem.
 */
export function parseShape(v: unknown): number[] | string {
  if (!Array.isArray(v)) return 'must be a list of non-negative integers';
  for (const d of v as unknown[])
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) return 'must be a list of non-negative integers';
  return v as number[];
}

/** Elements of a shape (product of its dims). Never allocates; may be huge or `Infinity`-free up to 2^53 × … */
export function shapeSize(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/**
 * The elements of `data`, given flat (`size` scalars) or nested to exactly `dims`, in row-major order.
 * @returns the flat elements, or the problem.
 */
export function flattenData(data: unknown, dims: readonly number[]): unknown[] | string {
  if (!Array.isArray(data)) return 'must be an array (flat, or nested to the shape)';
  const size = shapeSize(dims);
  const arr = data as unknown[];
  if (!arr.some(Array.isArray)) {
    if (arr.length !== size) return `has ${arr.length} value(s) but shape [${dims.join(', ')}] needs ${size}`;
    return arr;
  }
  if (dims.length < 2 || arr.length !== dims[0]) return `must be flat, or nested to the shape [${dims.join(', ')}]`;
  const out: unknown[] = [];
  const walk = (node: unknown[], depth: number): boolean => {
    if (node.length !== dims[depth]) return false;
    const leaf = depth === dims.length - 1;
    for (const child of node) {
      if (leaf) {
        if (Array.isArray(child)) return false;
        out.push(child);
      } else if (!Array.isArray(child) || !walk(child as unknown[], depth + 1)) return false;
    }
    return true;
  };
  return walk(arr, 0) ? out : `must be flat, or nested to the shape [${dims.join(', ')}]`;
}

/** Why `v` is not a valid element of `d`, or `undefined` if it is. */
function elementProblem(d: OipDatatype, v: unknown): string | undefined {
  if (d === 'BOOL') return typeof v === 'boolean' ? undefined : 'must be true or false';
  if (typeof v !== 'number' || !Number.isFinite(v)) return 'must be a finite number';
  const range = INT_RANGE[d];
  if (range !== undefined) {
    if (!Number.isInteger(v)) return 'must be an integer';
    if (v < range[0] || v > range[1]) return `must be within [${range[0]}, ${range[1]}]`;
  } else if (d === 'FP32' && Math.abs(v) > FP32_MAX) return 'is outside the FP32 range';
  return undefined;
}

/**
 * Converts flat JSON elements to `d`'s typed storage.
 * @returns the data, or the first bad element's index and problem.
 */
export function toTyped(d: OipDatatype, values: readonly unknown[]): TensorData | { index: number; problem: string } {
  for (let i = 0; i < values.length; i++) {
    const problem = elementProblem(d, values[i]);
    if (problem !== undefined) return { index: i, problem };
  }
  const t = tensorTypeOf(d);
  const out = allocate(t, values.length);
  if (out instanceof BigInt64Array || out instanceof BigUint64Array) {
    for (let i = 0; i < values.length; i++) out[i] = BigInt(values[i] as number);
  } else if (t === 'bool') {
    for (let i = 0; i < values.length; i++) out[i] = values[i] === true ? 1 : 0;
  } else {
    for (let i = 0; i < values.length; i++) out[i] = values[i] as number;
  }
  return out;
}

/** A response output: `{ name, datatype, shape, data }` with flat data (BOOL as booleans, 64-bit integers as numbers). */
export interface OutputJson {
  readonly name: string;
  readonly datatype: OipDatatype;
  readonly shape: readonly number[];
  readonly data: (number | boolean)[];
}

/** Encodes an output tensor for the response. */
export function outputJson(t: NamedTensor): OutputJson {
  const datatype = datatypeOfTensor(t.type);
  const data: (number | boolean)[] = new Array<number | boolean>(t.data.length);
  for (let i = 0; i < t.data.length; i++) {
    const x = t.data[i] as number | bigint;
    data[i] = datatype === 'BOOL' ? x !== 0 : Number(x);
  }
  return { name: t.name, datatype, shape: [...t.dims], data };
}
