/**
 * Open Inference Protocol tensor datatypes and their ONNX and engine counterparts. The names are the
 * protocol's (`BOOL`, `UINT8`…`UINT64`, `INT8`…`INT64`, `FP16`, `FP32`, `FP64`, `BYTES`); ONNX element types
 * are `TensorProto.DataType` numbers from onnx/onnx `onnx.proto`.
 */
import type { TensorType } from '../inference/tensor';

/** A datatype the engine runs, with its engine type and ONNX element type. */
interface Supported {
  readonly tensor: TensorType;
  readonly onnx: number;
}

const SUPPORTED = {
  BOOL: { tensor: 'bool', onnx: 9 },
  UINT8: { tensor: 'uint8', onnx: 2 },
  UINT16: { tensor: 'uint16', onnx: 4 },
  UINT32: { tensor: 'uint32', onnx: 12 },
  UINT64: { tensor: 'uint64', onnx: 13 },
  INT8: { tensor: 'int8', onnx: 3 },
  INT16: { tensor: 'int16', onnx: 5 },
  INT32: { tensor: 'int32', onnx: 6 },
  INT64: { tensor: 'int64', onnx: 7 },
  FP32: { tensor: 'float32', onnx: 1 },
  FP64: { tensor: 'float64', onnx: 11 },
} as const satisfies Record<string, Supported>;

/** A datatype this server accepts and returns. */
export type OipDatatype = keyof typeof SUPPORTED;

/** Every supported datatype, in the protocol's order. */
export const OIP_DATATYPES = Object.keys(SUPPORTED) as OipDatatype[];

/** Protocol datatypes this server refuses (with a 400), by ONNX element type where one exists. */
const REFUSED: Readonly<Record<string, number>> = { FP16: 10, BF16: 16, BYTES: 8 };

/** Whether `s` is a supported datatype name (case-sensitive, as the protocol says). */
export function isOipDatatype(s: unknown): s is OipDatatype {
  return typeof s === 'string' && Object.hasOwn(SUPPORTED, s);
}

/** Whether `s` is a protocol datatype this server knows but refuses (`FP16`, `BF16`, `BYTES`). */
export function isRefusedDatatype(s: unknown): boolean {
  return typeof s === 'string' && Object.hasOwn(REFUSED, s);
}

/** The engine tensor type of a datatype. */
export function tensorTypeOf(d: OipDatatype): TensorType {
  return SUPPORTED[d].tensor;
}

/** The protocol datatype of an engine tensor type. */
export function datatypeOfTensor(t: TensorType): OipDatatype {
  return OIP_DATATYPES.find((d) => SUPPORTED[d].tensor === t) as OipDatatype;
}

/**
 * The protocol name of an ONNX element type, including refused ones (`FP16`, `BF16`, `BYTES`) so metadata
 * describes every model truthfully; `undefined` for types the protocol has no name for.
 */
export function datatypeOfOnnx(elemType: number): string | undefined {
  return (
    OIP_DATATYPES.find((d) => SUPPORTED[d].onnx === elemType) ??
    Object.keys(REFUSED).find((k) => REFUSED[k] === elemType)
  );
}
