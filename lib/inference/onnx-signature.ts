/**
 * Reads an ONNX model's graph signature (inputs and outputs: names, element types, shapes) straight
 * from the protobuf wire format, skipping weights. It touches a few hundred bytes of a 34 MB model, so
 * it runs on the event loop without blocking it, and it refuses a corrupt file before any worker loads it.
 * Field numbers are those of onnx/onnx `onnx.proto` (ModelProto.graph = 7; GraphProto.initializer = 5,
 * input = 11, output = 12; ValueInfoProto.name = 1, type = 2; TypeProto.tensor_type = 1; …).
 */
import { AppError } from '../errors/errors';
import type { ModelManifest } from '../models/manifest';

/** One graph input or output. `dims`: numbers for fixed sizes, strings for symbolic ones, `undefined` when unknown. */
export interface TensorSignature {
  readonly name: string;
  /** `TensorProto.DataType` (1 = float32); 0 when absent. */
  readonly elemType: number;
  readonly dims: readonly (number | string | undefined)[] | undefined;
}

/** A model's graph inputs (initializers excluded) and outputs. */
export interface OnnxSignature {
  readonly irVersion: number;
  readonly inputs: readonly TensorSignature[];
  readonly outputs: readonly TensorSignature[];
}

/** `TensorProto.DataType.FLOAT`. */
export const ONNX_FLOAT = 1;

class Corrupt extends Error {}

/** A protobuf reader over one message's bytes. */
class Reader {
  pos: number;
  constructor(
    private readonly buf: Uint8Array,
    start = 0,
    private readonly end = buf.length,
  ) {
    this.pos = start;
  }
  get done(): boolean {
    return this.pos >= this.end;
  }
  varint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Corrupt('truncated varint');
      const b = this.buf[this.pos++] as number;
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
    }
    throw new Corrupt('varint too long');
  }
  /** Reads a tag; returns [field, wireType]. */
  tag(): [number, number] {
    const t = this.varint();
    const field = Math.floor(t / 8);
    if (field === 0) throw new Corrupt('field 0');
    return [field, t % 8];
  }
  /** A length-delimited field's bounds, advancing past it. */
  sub(): Reader {
    const len = this.varint();
    const start = this.pos;
    if (start + len > this.end) throw new Corrupt('field past end');
    this.pos += len;
    return new Reader(this.buf, start, start + len);
  }
  text(): string {
    const r = this.sub();
    return new TextDecoder('utf-8', { fatal: false }).decode(this.buf.subarray(r.pos, r.end));
  }
  skip(wire: number): void {
    switch (wire) {
      case 0:
        this.varint();
        return;
      case 1:
        this.advance(8);
        return;
      case 2:
        this.sub();
        return;
      case 5:
        this.advance(4);
        return;
      default:
        throw new Corrupt(`unsupported wire type ${wire}`);
    }
  }
  private advance(n: number): void {
    if (this.pos + n > this.end) throw new Corrupt('field past end');
    this.pos += n;
  }
}

function fields(r: Reader, on: (field: number, wire: number, r: Reader) => boolean): void {
  while (!r.done) {
    const [field, wire] = r.tag();
    if (!on(field, wire, r)) r.skip(wire);
  }
}

function readDim(r: Reader): number | string | undefined {
  let dim: number | string | undefined;
  fields(r, (f, w, x) => {
    if (f === 1 && w === 0) dim = x.varint();
    else if (f === 2 && w === 2) dim = x.text();
    else return false;
    return true;
  });
  return dim;
}

function readValueInfo(r: Reader): TensorSignature {
  let name = '';
  let elemType = 0;
  let dims: (number | string | undefined)[] | undefined;
  fields(r, (f, w, x) => {
    if (f === 1 && w === 2) name = x.text();
    else if (f === 2 && w === 2) {
      fields(x.sub(), (tf, tw, tx) => {
        if (tf !== 1 || tw !== 2) return false; // tensor_type
        fields(tx.sub(), (ef, ew, ex) => {
          if (ef === 1 && ew === 0) elemType = ex.varint();
          else if (ef === 2 && ew === 2) {
            dims = [];
            fields(ex.sub(), (sf, sw, sx) => {
              if (sf !== 1 || sw !== 2) return false;
              dims?.push(readDim(sx.sub()));
              return true;
            });
          } else return false;
          return true;
        });
        return true;
      });
    } else return false;
    return true;
  });
  return { name, elemType, dims };
}

function initializerName(r: Reader): string | undefined {
  let name: string | undefined;
  fields(r, (f, w, x) => {
    if (f !== 8 || w !== 2) return false;
    name = x.text();
    return true;
  });
  return name;
}

/**
 * Reads the signature of an ONNX model.
 * @throws AppError `model_invalid` if the bytes are not a well-formed ONNX model with a graph.
 */
export function readOnnxSignature(bytes: Uint8Array): OnnxSignature {
  try {
    let irVersion = 0;
    let graph: Reader | undefined;
    fields(new Reader(bytes), (f, w, x) => {
      if (f === 1 && w === 0) irVersion = x.varint();
      else if (f === 7 && w === 2) graph = x.sub();
      else return false;
      return true;
    });
    if (graph === undefined || irVersion < 1) throw new Corrupt('no graph');
    const inputs: TensorSignature[] = [];
    const outputs: TensorSignature[] = [];
    const initializers = new Set<string>();
    fields(graph, (f, w, x) => {
      if (w !== 2) return false;
      if (f === 11) inputs.push(readValueInfo(x.sub()));
      else if (f === 12) outputs.push(readValueInfo(x.sub()));
      else if (f === 5) {
        const n = initializerName(x.sub());
        if (n !== undefined) initializers.add(n);
      } else return false;
      return true;
    });
    if (outputs.length === 0) throw new Corrupt('no graph output');
    return { irVersion, inputs: inputs.filter((i) => !initializers.has(i.name)), outputs };
  } catch (err) {
    if (!(err instanceof Corrupt)) throw err;
    throw new AppError('model_invalid', 'The file is not a valid ONNX model.', {
      transient: false,
      errors: [{ path: 'model', message: `not a well-formed ONNX model (${err.message})` }],
    });
  }
}

/**
 * Checks a signature against the manifest and the featurizer: exactly one float32 input named as the
 * manifest says, shaped `[batch, featureCount]`; a float32 output named as the manifest says, one score per row.
 * @returns every mismatch (empty when the signature fits).
 */
export function signatureProblems(
  sig: OnnxSignature,
  manifest: ModelManifest,
  featureCount: number,
): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const input = sig.inputs.find((i) => i.name === manifest.input.name);
  if (sig.inputs.length !== 1 || input === undefined) {
    problems.push({
      path: 'input.name',
      message: `the model must have one input named "${manifest.input.name}" (it has: ${sig.inputs.map((i) => i.name).join(', ') || 'none'})`,
    });
  } else {
    if (input.elemType !== ONNX_FLOAT)
      problems.push({ path: 'input.dtype', message: 'the model input must be float32' });
    const dims = input.dims;
    if (
      dims !== undefined &&
      (dims.length !== 2 ||
        (typeof dims[1] === 'number' && dims[1] !== featureCount) ||
        (typeof dims[0] === 'number' && dims[0] !== -1 && dims[0] !== 0))
    ) {
      problems.push({
        path: 'input.shape',
        message: `the model input must be [batch, ${featureCount}] with a dynamic batch dimension`,
      });
    }
  }
  const output = sig.outputs.find((o) => o.name === manifest.output.name);
  if (output === undefined) {
    problems.push({
      path: 'output.name',
      message: `the model has no output named "${manifest.output.name}" (it has: ${sig.outputs.map((o) => o.name).join(', ')})`,
    });
  } else {
    if (output.elemType !== ONNX_FLOAT)
      problems.push({ path: 'output.dtype', message: 'the model output must be float32' });
    const last = output.dims?.at(-1);
    if (
      output.dims !== undefined &&
      (output.dims.length > 2 || (typeof last === 'number' && last !== 1 && output.dims.length === 2))
    ) {
      problems.push({
        path: 'output.shape',
        message: 'the model output must be one score per row ([batch, 1] or [batch])',
      });
    }
  }
  return problems;
}
