import { endianness } from 'node:os';
import { parse, type Type } from 'protobufjs';

/**
 * Minimal ONNX model writer: dense (fully-connected) networks only, serialised with protobufjs from an inline
 * subset of `onnx.proto` (field numbers as in onnx/onnx `onnx/onnx.proto`; fields we never write are omitted,
 * which is wire-compatible). An inline schema is used rather than the `onnx-proto` package: it is ~60 lines,
 * has no extra dependency and only contains what this writer emits.
 */
const ONNX_SUBSET_PROTO = `
syntax = "proto2";
package onnx;
message AttributeProto {
  enum AttributeType { UNDEFINED = 0; FLOAT = 1; INT = 2; STRING = 3; TENSOR = 4; GRAPH = 5; FLOATS = 6; INTS = 7; STRINGS = 8; }
  optional string name = 1;
  optional AttributeType type = 20;
  optional float f = 2;
  optional int64 i = 3;
  optional bytes s = 4;
  optional TensorProto t = 5;
  repeated float floats = 7;
  repeated int64 ints = 8;
}
message ValueInfoProto { optional string name = 1; optional TypeProto type = 2; optional string doc_string = 3; }
message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  optional string name = 3;
  optional string op_type = 4;
  optional string domain = 7;
  repeated AttributeProto attribute = 5;
  optional string doc_string = 6;
}
message OperatorSetIdProto { optional string domain = 1; optional int64 version = 2; }
message StringStringEntryProto { optional string key = 1; optional string value = 2; }
message ModelProto {
  optional int64 ir_version = 1;
  repeated OperatorSetIdProto opset_import = 8;
  optional string producer_name = 2;
  optional string producer_version = 3;
  optional string domain = 4;
  optional int64 model_version = 5;
  optional string doc_string = 6;
  optional GraphProto graph = 7;
  repeated StringStringEntryProto metadata_props = 14;
}
message GraphProto {
  repeated NodeProto node = 1;
  optional string name = 2;
  repeated TensorProto initializer = 5;
  optional string doc_string = 10;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}
message TensorProto {
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  repeated float float_data = 4 [packed = true];
  optional string name = 8;
  optional string doc_string = 12;
  optional bytes raw_data = 9;
}
message TensorShapeProto {
  message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } optional string denotation = 3; }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor { optional int32 elem_type = 1; optional TensorShapeProto shape = 2; }
  oneof value { Tensor tensor_type = 1; }
  optional string denotation = 6;
}
`;

/** ONNX IR version written (8 = ONNX 1.10+). */
export const IR_VERSION = 8;
/** Default-domain opset version written. */
export const OPSET_VERSION = 17;
/** `TensorProto.DataType.FLOAT`. */
const FLOAT = 1;

let modelType: Type | undefined;
function modelProto(): Type {
  modelType ??= parse(ONNX_SUBSET_PROTO, { keepCase: true }).root.lookupType('onnx.ModelProto');
  return modelType;
}

/** Activation applied after a dense layer. */
export type Activation = 'relu' | 'sigmoid' | 'none';

/** One fully-connected layer: `y = act(x · W + b)`. */
export interface DenseLayer {
  /** `in × out` weights, row-major (`weights[i * out + j]` links input i to output j). */
  readonly weights: Float32Array;
  /** `out` biases. */
  readonly bias: Float32Array;
  readonly activation: Activation;
}

/** What {@link buildDenseModel} serialises. */
export interface DenseModelSpec {
  /** Graph input name; its shape is `[N, inputSize]` with symbolic batch dim `N`. */
  readonly inputName: string;
  /** Graph output name; its shape is `[N, out]` (`out` of the last layer, 1 for a scorer). */
  readonly outputName: string;
  readonly inputSize: number;
  /** Optional per-feature mean subtracted first (`Sub`), length `inputSize`. */
  readonly mean?: Float32Array;
  /** Optional per-feature scale divided by after the mean (`Div`), length `inputSize`; must be non-zero. */
  readonly std?: Float32Array;
  /** At least one layer; each layer's input width is the previous one's output width. */
  readonly layers: readonly DenseLayer[];
  /** `ModelProto.producer_name`. */
  readonly producer: string;
  /** `ModelProto.doc_string`. */
  readonly docString: string;
}

/** Raw little-endian float32 bytes of `data` (zero-copy view on little-endian hosts). */
function floatBytes(data: Float32Array): Uint8Array {
  if (endianness() === 'LE') return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const out = new Uint8Array(data.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < data.length; i++) view.setFloat32(i * 4, data[i] as number, true);
  return out;
}

function tensor(name: string, dims: number[], data: Float32Array): object {
  return { name, dims, data_type: FLOAT, raw_data: floatBytes(data) };
}

function valueInfo(name: string, dims: readonly (number | string)[], elemType = FLOAT): object {
  const dim = dims.map((d) => (typeof d === 'string' ? { dim_param: d } : { dim_value: d }));
  return { name, type: { tensor_type: { elem_type: elemType, shape: { dim } } } };
}

function encodeModel(producer: string, docString: string, graph: object): Uint8Array {
  const model = {
    ir_version: IR_VERSION,
    opset_import: [{ domain: '', version: OPSET_VERSION }],
    producer_name: producer,
    producer_version: '1',
    doc_string: docString,
    graph,
  };
  const type = modelProto();
  const err = type.verify(model);
  if (err !== null) throw new Error(`internal ONNX encoding error: ${err}`);
  const bytes = type.encode(type.fromObject(model)).finish();
  return new Uint8Array(bytes); // copy: detach from protobufjs's (possibly pooled) Buffer
}

/** One pass-through of {@link buildPassThroughModel}: graph input `input` to graph output `output`. */
export interface PassThrough {
  readonly input: string;
  readonly output: string;
  /** `TensorProto.DataType` of the input (1 float, 2 uint8, 3 int8, 4 uint16, 5 int16, 6 int32, 7 int64, 9 bool, 11 double, 12 uint32, 13 uint64). */
  readonly elemType: number;
  /** Dims of input and output: numbers fixed, strings symbolic (e.g. `'N'` for the batch). */
  readonly dims: readonly (number | string)[];
  /** Cast to this `TensorProto.DataType` (a `Cast` node) instead of passing through unchanged (`Identity`). */
  readonly castTo?: number;
}

/**
 * Serialises a model of independent pass-throughs, one `Identity` (or `Cast`) node per input, so tests can
 * round-trip tensors of every element type. Deterministic.
 * @throws RangeError on an empty spec or a repeated name.
 */
export function buildPassThroughModel(spec: {
  readonly tensors: readonly PassThrough[];
  readonly producer: string;
  readonly docString: string;
}): Uint8Array {
  const names = spec.tensors.flatMap((t) => [t.input, t.output]);
  if (spec.tensors.length === 0) throw new RangeError('at least one tensor is required');
  if (new Set(names).size !== names.length) throw new RangeError('tensor names must be unique');
  const node = spec.tensors.map((t, k) =>
    t.castTo === undefined
      ? { name: `identity${k}`, op_type: 'Identity', input: [t.input], output: [t.output] }
      : {
          name: `cast${k}`,
          op_type: 'Cast',
          input: [t.input],
          output: [t.output],
          attribute: [{ name: 'to', type: 2, i: t.castTo }],
        },
  );
  return encodeModel(spec.producer, spec.docString, {
    name: 'pass_through',
    node,
    input: spec.tensors.map((t) => valueInfo(t.input, t.dims, t.elemType)),
    output: spec.tensors.map((t) => valueInfo(t.output, t.dims, t.castTo ?? t.elemType)),
  });
}

/** Output width of the layer stack, after validating every size. @throws RangeError on a size mismatch. */
function checkSpec(spec: DenseModelSpec): number {
  if (!Number.isInteger(spec.inputSize) || spec.inputSize < 1)
    throw new RangeError('inputSize must be a positive integer');
  if (spec.mean !== undefined && spec.mean.length !== spec.inputSize)
    throw new RangeError('mean length must equal inputSize');
  if (spec.std !== undefined && spec.std.length !== spec.inputSize)
    throw new RangeError('std length must equal inputSize');
  if (spec.layers.length === 0) throw new RangeError('at least one layer is required');
  let width = spec.inputSize;
  spec.layers.forEach((layer, k) => {
    const out = layer.bias.length;
    if (out < 1 || layer.weights.length !== width * out) {
      throw new RangeError(`layer ${k}: weights must have ${width} × ${out} elements, got ${layer.weights.length}`);
    }
    width = out;
  });
  return width;
}

/**
 * Serialises a dense network as an ONNX model (IR {@link IR_VERSION}, opset {@link OPSET_VERSION}).
 * Graph: `[Sub mean] → [Div std] → (Gemm → [Relu|Sigmoid]) × layers`; weights are initializers stored as raw
 * little-endian float32. Deterministic: the same spec always gives the same bytes.
 * @returns the `ModelProto` bytes (a plain `Uint8Array`, not a Buffer).
 * @throws RangeError when sizes are inconsistent.
 */
export function buildDenseModel(spec: DenseModelSpec): Uint8Array {
  const outWidth = checkSpec(spec);
  const nodes: object[] = [];
  const inits: object[] = [];
  let current = spec.inputName;
  const next = (name: string, isLast: boolean): string => (isLast ? spec.outputName : name);
  if (spec.mean !== undefined) {
    inits.push(tensor('mean', [spec.inputSize], spec.mean));
    const out = 'centered';
    nodes.push({ name: 'standardize_sub', op_type: 'Sub', input: [current, 'mean'], output: [out] });
    current = out;
  }
  if (spec.std !== undefined) {
    inits.push(tensor('std', [spec.inputSize], spec.std));
    const out = 'standardized';
    nodes.push({ name: 'standardize_div', op_type: 'Div', input: [current, 'std'], output: [out] });
    current = out;
  }
  let width = spec.inputSize;
  spec.layers.forEach((layer, k) => {
    const last = k === spec.layers.length - 1;
    const outSize = layer.bias.length;
    const [w, b] = [`layer${k}_weight`, `layer${k}_bias`];
    inits.push(tensor(w, [width, outSize], layer.weights), tensor(b, [outSize], layer.bias));
    const linear = next(`layer${k}_linear`, last && layer.activation === 'none');
    nodes.push({ name: `layer${k}_gemm`, op_type: 'Gemm', input: [current, w, b], output: [linear] });
    current = linear;
    if (layer.activation !== 'none') {
      const act = next(`layer${k}_${layer.activation}`, last);
      const op = layer.activation === 'relu' ? 'Relu' : 'Sigmoid';
      nodes.push({ name: `layer${k}_${layer.activation}`, op_type: op, input: [current], output: [act] });
      current = act;
    }
    width = outSize;
  });
  return encodeModel(spec.producer, spec.docString, {
    name: 'dense',
    node: nodes,
    initializer: inits,
    input: [valueInfo(spec.inputName, ['N', spec.inputSize])],
    output: [valueInfo(spec.outputName, ['N', outWidth])],
  });
}

/**
 * Pure-TypeScript forward pass of the same network (float64 arithmetic on the float32 parameters), for tests
 * and reference scoring.
 * @param input `batch × inputSize` row-major features.
 * @returns `batch × outWidth` row-major outputs.
 */
export function denseForward(spec: DenseModelSpec, input: ArrayLike<number>, batch: number): Float64Array {
  checkSpec(spec);
  let width = spec.inputSize;
  let cur = Float64Array.from({ length: batch * width }, (_v, idx) => {
    const i = idx % width;
    const centred = (input[idx] as number) - (spec.mean?.[i] ?? 0);
    return spec.std === undefined ? centred : centred / (spec.std[i] as number);
  });
  for (const layer of spec.layers) {
    const out = layer.bias.length;
    const next = new Float64Array(batch * out);
    for (let n = 0; n < batch; n++) {
      for (let j = 0; j < out; j++) {
        let s = layer.bias[j] as number;
        for (let i = 0; i < width; i++) s += (cur[n * width + i] as number) * (layer.weights[i * out + j] as number);
        next[n * out + j] =
          layer.activation === 'relu' ? Math.max(0, s) : layer.activation === 'sigmoid' ? 1 / (1 + Math.exp(-s)) : s;
      }
    }
    cur = next;
    width = out;
  }
  return cur;
}
