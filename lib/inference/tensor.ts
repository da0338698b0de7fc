/**
 * The generic tensor representation of the inference path: named, typed, shaped tensors in and out. The
 * fraud scorer's `[rows, width]` float32 call is one client of it (see `score-rows.ts`); the Open Inference
 * Protocol adapter is another.
 */
import { AppError } from '../errors/errors';

/** Element types the engine runs (ONNX Runtime's names). `bool` is stored one byte per element (0/1). */
export type TensorType =
  'bool' | 'int8' | 'int16' | 'int32' | 'int64' | 'uint8' | 'uint16' | 'uint32' | 'uint64' | 'float32' | 'float64';

/** Typed storage of a tensor's elements, row-major. */
export type TensorData =
  | Uint8Array
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Uint16Array
  | Uint32Array
  | BigUint64Array
  | Float32Array
  | Float64Array;

/** One named tensor. `data.length` equals the product of `dims`. */
export interface NamedTensor {
  readonly name: string;
  readonly type: TensorType;
  readonly dims: readonly number[];
  readonly data: TensorData;
}

/** One inference call through the generic path. */
export interface TensorRequest {
  /** Every model input, by name. */
  readonly inputs: readonly NamedTensor[];
  /** The outputs wanted, by name (at least one). */
  readonly outputs: readonly string[];
  /**
   * Rows along the leading (batch) axis, shared by every input and output: the micro-batcher may run
   * this request together with others, concatenating inputs and splitting outputs along that axis.
   * `undefined`: the model has no batch axis; the request always runs alone.
   */
  readonly rows?: number;
}

/** Timing of one call, as measured by the backend. All ms. */
export interface TensorTiming {
  /** Time spent queued before inference started, ms. */
  readonly queueMs: number;
  /** Time the inference itself took, ms. */
  readonly inferenceMs: number;
  /** Rows in the batch this call ran in (1 for a request without a batch axis). */
  readonly batchSize: number;
}

/** Outputs of one call, in the requested order. */
export interface TensorResult {
  readonly outputs: readonly NamedTensor[];
  readonly timing: TensorTiming;
}

type Ctor = { new (n: number): TensorData; readonly BYTES_PER_ELEMENT: number };

const CTORS: Readonly<Record<TensorType, Ctor>> = {
  bool: Uint8Array,
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  uint8: Uint8Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
  uint64: BigUint64Array,
  float32: Float32Array,
  float64: Float64Array,
};

/** Every {@link TensorType}. */
export const TENSOR_TYPES = Object.keys(CTORS) as TensorType[];

/** Whether `t` is a {@link TensorType}. */
export function isTensorType(t: unknown): t is TensorType {
  return typeof t === 'string' && Object.hasOwn(CTORS, t);
}

/** A zero-filled array of `n` elements of `type`. */
export function allocate(type: TensorType, n: number): TensorData {
  return new CTORS[type](n);
}

/** Wraps a transferred buffer as `type`'s array (no copy). */
export function view(type: TensorType, buffer: ArrayBuffer): TensorData {
  const C = CTORS[type] as unknown as new (b: ArrayBuffer) => TensorData;
  return new C(buffer);
}

/** Product of `dims` (1 for a scalar). */
export function elementCount(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/** Elements per leading-axis row of a `dims`-shaped tensor (product of all but the first dim). */
export function rowSize(dims: readonly number[]): number {
  return elementCount(dims.slice(1));
}

/** A key equal for two requests exactly when their inputs and outputs can share one batch. */
export function batchKey(req: TensorRequest): string {
  const ins = req.inputs.map((t) => `${t.name}:${t.type}:${t.dims.slice(1).join('x')}`).join('|');
  return `${ins}>${req.outputs.join('|')}`;
}

/**
 * Checks a request's own consistency: data lengths match dims, and with `rows` every input leads with it.
 * @throws AppError `inference_failed` (not transient).
 */
export function checkRequest(req: TensorRequest): void {
  const fail = (m: string): never => {
    throw new AppError('inference_failed', m, { transient: false });
  };
  if (req.inputs.length === 0 || req.outputs.length === 0) fail('A request needs at least one input and one output.');
  if (req.rows !== undefined && (!Number.isInteger(req.rows) || req.rows < 0))
    fail(`Rows must be a non-negative integer, got ${req.rows}.`);
  for (const t of req.inputs) {
    if (t.dims.some((d) => !Number.isInteger(d) || d < 0)) fail(`Input "${t.name}" has an invalid shape.`);
    if (t.data.length !== elementCount(t.dims))
      fail(`Input "${t.name}" has ${t.data.length} values for shape [${t.dims.join(', ')}].`);
    if (req.rows !== undefined && t.dims[0] !== req.rows)
      fail(`Input "${t.name}" must lead with the batch of ${req.rows} row(s).`);
  }
}

/** Concatenates slices of same-shaped tensors along the leading axis: `parts[i]` = rows `[offset, offset + rows)` of `tensors[i]`. */
export function concatRows(
  like: NamedTensor,
  parts: readonly { readonly tensor: NamedTensor; readonly offset: number; readonly rows: number }[],
): NamedTensor {
  const per = rowSize(like.dims);
  let total = 0;
  for (const p of parts) total += p.rows;
  const data = allocate(like.type, total * per);
  let at = 0;
  for (const p of parts) {
    const src = p.tensor.data.subarray(p.offset * per, (p.offset + p.rows) * per);
    (data as Uint8Array).set(src as Uint8Array, at * per);
    at += p.rows;
  }
  return { name: like.name, type: like.type, dims: [total, ...like.dims.slice(1)], data };
}
