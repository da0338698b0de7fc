/**
 * Parses and validates an Open Inference Protocol inference request against a model's signature, into the
 * engine's generic tensor request. Pure. Every problem is named (`inputs.0.shape`, …); at most
 * {@link MAX_ERRORS} are reported.
 */
import { textProblem } from '../domain/text';
import { AppError, type FieldError } from '../errors/errors';
import type { NamedTensor, TensorRequest } from '../inference/tensor';
import { isOipDatatype, isRefusedDatatype, tensorTypeOf } from './datatypes';
import { flattenData, parseShape, toTyped } from './tensor-json';

/** Most problems reported for one request. */
export const MAX_ERRORS = 20;

/** A model input or output as the protocol sees it. */
export interface ModelTensor {
  readonly name: string;
  /** Protocol datatype (`FP32`, …, or a refused one like `FP16`); `undefined` if it has no protocol name. */
  readonly datatype: string | undefined;
  /** Dims: a number when fixed, `undefined` when dynamic; the whole list `undefined` when the rank is unknown. */
  readonly dims: readonly (number | undefined)[] | undefined;
}

/** A model's inputs and outputs. */
export interface ModelView {
  readonly inputs: readonly ModelTensor[];
  readonly outputs: readonly ModelTensor[];
}

/** `$parameters`: scalar values by name. */
export type Parameters = Readonly<Record<string, string | number | boolean>>;

/** A validated inference request. */
export interface ParsedInfer {
  readonly id?: string;
  readonly parameters?: Parameters;
  /** The engine request: inputs in the model's order, outputs requested (all, in the model's order, by default). */
  readonly request: TensorRequest;
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

type Obj = Record<string, unknown>;

class Problems {
  readonly list: FieldError[] = [];
  add(path: string, message: string): void {
    if (this.list.length < MAX_ERRORS) this.list.push({ path, message });
  }
  /** Adds the problem of a string with a refused character (lib/domain/text.ts); whether it was clean. */
  text(path: string, s: string): boolean {
    const problem = textProblem(s, 'identifier');
    if (problem !== undefined) this.add(path, problem);
    return problem === undefined;
  }
  get any(): boolean {
    return this.list.length > 0;
  }
}

/** `v` as an object with only `allowed` keys (and none of `__proto__`, `constructor`, `prototype`), else `undefined` (problems added). */
function object(v: unknown, path: string, allowed: readonly string[], p: Problems): Obj | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    p.add(path, 'must be a JSON object');
    return undefined;
  }
  let ok = true;
  for (const k of Object.keys(v)) {
    const at = path === '' ? k : `${path}.${k}`;
    if (FORBIDDEN_KEYS.has(k)) {
      p.add(at, 'is a forbidden key');
      ok = false;
    } else if (!allowed.includes(k)) {
      p.add(at, 'unknown field');
      ok = false;
    }
  }
  return ok ? (v as Obj) : undefined;
}

function parameters(v: unknown, path: string, p: Problems): Parameters | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    p.add(path, 'must be an object of string, number or boolean values');
    return undefined;
  }
  const out: Record<string, string | number | boolean> = Object.create(null) as Record<string, never>;
  for (const [k, x] of Object.entries(v)) {
    if (FORBIDDEN_KEYS.has(k)) p.add(`${path}.${k}`, 'is a forbidden key');
    else if (typeof x !== 'string' && typeof x !== 'number' && typeof x !== 'boolean')
      p.add(`${path}.${k}`, 'must be a string, number or boolean');
    else if (p.text(`${path}.${k}`, k) && (typeof x !== 'string' || p.text(`${path}.${k}`, x))) out[k] = x;
  }
  return { ...out };
}

/** Checks a request shape against the model's dims; returns the problem or `undefined`. */
function shapeProblem(shape: readonly number[], model: ModelTensor): string | undefined {
  const dims = model.dims;
  if (dims === undefined) return undefined;
  const want = `[${dims.map((d) => d ?? -1).join(', ')}]`;
  if (shape.length !== dims.length) return `has rank ${shape.length}; the model input is ${want}`;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i];
    if (d !== undefined && shape[i] !== d) return `dimension ${i} is ${shape[i]}; the model input is ${want}`;
  }
  return undefined;
}

function parseInput(v: unknown, path: string, model: ModelView, p: Problems): NamedTensor | undefined {
  const o = object(v, path, ['name', 'shape', 'datatype', 'parameters', 'data'], p);
  if (o === undefined) return undefined;
  const before = p.list.length;
  const params = parameters(o['parameters'], `${path}.parameters`, p);
  if (params !== undefined && Object.hasOwn(params, 'binary_data_size'))
    p.add(`${path}.parameters.binary_data_size`, 'the binary tensor extension is not supported; send JSON data');
  const name = o['name'];
  const spec = typeof name === 'string' ? model.inputs.find((i) => i.name === name) : undefined;
  if (typeof name !== 'string') p.add(`${path}.name`, 'is required (a string)');
  else if (spec === undefined)
    p.add(`${path}.name`, `unknown input; the model's inputs are: ${model.inputs.map((i) => i.name).join(', ')}`);
  const datatype = o['datatype'];
  if (isRefusedDatatype(datatype)) p.add(`${path}.datatype`, `${String(datatype)} is not supported by this server`);
  else if (!isOipDatatype(datatype)) p.add(`${path}.datatype`, 'is required (a datatype such as FP32 or INT64)');
  else if (spec !== undefined && spec.datatype !== datatype)
    p.add(`${path}.datatype`, `is ${datatype}; the model input "${spec.name}" is ${spec.datatype ?? 'unsupported'}`);
  const shape = parseShape(o['shape']);
  if (typeof shape === 'string') p.add(`${path}.shape`, o['shape'] === undefined ? 'is required' : shape);
  else if (spec !== undefined) {
    const problem = shapeProblem(shape, spec);
    if (problem !== undefined) p.add(`${path}.shape`, problem);
  }
  if (typeof shape !== 'string' && shape.includes(0)) p.add(`${path}.shape`, 'empty tensors are not supported');
  if (o['data'] === undefined) p.add(`${path}.data`, 'is required');
  if (p.list.length > before || typeof shape === 'string' || !isOipDatatype(datatype) || spec === undefined)
    return undefined;
  const flat = flattenData(o['data'], shape);
  if (typeof flat === 'string') {
    p.add(`${path}.data`, flat);
    return undefined;
  }
  const data = toTyped(datatype, flat);
  if (!ArrayBuffer.isView(data)) {
    p.add(`${path}.data.${data.index}`, `${data.problem} (${datatype})`);
    return undefined;
  }
  return { name: spec.name, type: tensorTypeOf(datatype), dims: shape, data };
}

function parseOutputs(v: unknown, model: ModelView, p: Problems): string[] | undefined {
  if (v === undefined) return model.outputs.map((o) => o.name);
  if (!Array.isArray(v) || v.length === 0) {
    p.add('outputs', 'must be a non-empty array of { "name": ... }');
    return undefined;
  }
  const names: string[] = [];
  (v as unknown[]).forEach((item, k) => {
    const o = object(item, `outputs.${k}`, ['name', 'parameters'], p);
    if (o === undefined) return;
    parameters(o['parameters'], `outputs.${k}.parameters`, p);
    const name = o['name'];
    if (typeof name !== 'string') p.add(`outputs.${k}.name`, 'is required (a string)');
    else if (!model.outputs.some((m) => m.name === name))
      p.add(
        `outputs.${k}.name`,
        `unknown output; the model's outputs are: ${model.outputs.map((m) => m.name).join(', ')}`,
      );
    else if (names.includes(name)) p.add(`outputs.${k}.name`, 'is requested twice');
    else names.push(name);
  });
  return names;
}

/** Whether every model input and output leads with a dynamic (batch) dimension. */
export function hasBatchAxis(model: ModelView): boolean {
  const leadsDynamic = (t: ModelTensor): boolean =>
    t.dims !== undefined && t.dims.length >= 1 && t.dims[0] === undefined;
  return model.inputs.every(leadsDynamic) && model.outputs.every(leadsDynamic);
}

/**
 * Validates an inference request body against a model.
 * @throws AppError `validation_failed` naming every problem (at most {@link MAX_ERRORS}).
 */
export function parseInferRequest(body: unknown, model: ModelView): ParsedInfer {
  const p = new Problems();
  const o = object(body, '', ['id', 'parameters', 'inputs', 'outputs'], p);
  if (o === undefined) throw invalid(p, body);
  const id = o['id'];
  if (id !== undefined && typeof id !== 'string') p.add('id', 'must be a string');
  else if (typeof id === 'string') p.text('id', id);
  const params = parameters(o['parameters'], 'parameters', p);
  const rawInputs = o['inputs'];
  const inputs: NamedTensor[] = [];
  if (!Array.isArray(rawInputs) || rawInputs.length === 0) p.add('inputs', 'must be a non-empty array of tensors');
  else {
    (rawInputs as unknown[]).forEach((item, k) => {
      const t = parseInput(item, `inputs.${k}`, model, p);
      if (t === undefined) return;
      if (inputs.some((i) => i.name === t.name)) p.add(`inputs.${k}.name`, 'is given twice');
      else inputs.push(t);
    });
    const given = new Set(
      (rawInputs as unknown[]).map((i) => (i as { name?: unknown } | null)?.name).filter((n) => typeof n === 'string'),
    );
    for (const m of model.inputs) if (!given.has(m.name)) p.add('inputs', `missing input "${m.name}"`);
  }
  const outputs = parseOutputs(o['outputs'], model, p);
  if (p.any || outputs === undefined) throw invalid(p, body);
  const ordered = model.inputs.map((m) => inputs.find((i) => i.name === m.name) as NamedTensor);
  const lead = ordered[0]?.dims[0];
  const rows = hasBatchAxis(model) && lead !== undefined && ordered.every((t) => t.dims[0] === lead) ? lead : undefined;
  return {
    ...(typeof id === 'string' ? { id } : {}),
    ...(params === undefined ? {} : { parameters: params }),
    request: { inputs: ordered, outputs, ...(rows === undefined ? {} : { rows }) },
  };
}

function invalid(p: Problems, body: unknown): AppError {
  const whole = typeof body !== 'object' || body === null || Array.isArray(body);
  return new AppError(
    'validation_failed',
    whole ? 'The body must be a JSON object (an inference request).' : `${p.list.length} invalid field(s).`,
    { errors: p.list },
  );
}
