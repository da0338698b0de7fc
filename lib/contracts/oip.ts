/**
 * The Open Inference Protocol (KServe V2 REST) routes' contracts: server metadata and health, and per model (with and
 * without `/versions/{version}`: a route cannot hold an optional middle segment) its metadata, readiness and
 * inference. Their errors are the protocol's `{ "error" }` ({@link OipError}, written by `oipRoute` of
 * lib/oip/oip-http.ts), and readiness answers 400 when not ready (the protocol: a 4xx status means false). The
 * inference request is declared here for the reference page; lib/oip/infer-request.ts parses it (strictly, against
 * the model's signature, naming every bad field in the protocol's message). The inference answer is written by
 * `JSON.stringify` (its tensors are large numeric arrays that may hold non-finite numbers, written as `null`).
 * @module
 */
import { z } from 'zod';
import { defineContract, type Contract, type Method } from '../http/contract';
import { OIP_DATATYPES } from '../oip/datatypes';
import { pathParam } from './common';

/** The protocol's error body. */
export const OipError = z
  .strictObject({ error: z.string().describe('The problem, then every invalid field (`path: message`).') })
  .meta({ id: 'OipError', description: 'An Open Inference Protocol error (KServe V2), with the status of its code.' });

const Datatype = z.enum(OIP_DATATYPES).describe('A tensor datatype this server runs.');

const Parameters = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
  .meta({ id: 'OipParameters', description: 'Parameters: scalar values by name.' });

const TensorMetadata = z
  .strictObject({
    name: z.string(),
    datatype: z.string().describe('The protocol datatype (`UNSUPPORTED` when the protocol has no name for it).'),
    shape: z.array(z.number()).describe('Dims; -1 for a dynamic one; `[]` when the rank is unknown.'),
  })
  .meta({ id: 'OipTensorMetadata', description: 'A model input or output.' });

const ServerMetadata = z
  .strictObject({ name: z.string(), version: z.string(), extensions: z.array(z.string()) })
  .meta({ id: 'OipServerMetadata', description: 'The server: its name, version and protocol extensions (none).' });

const ModelMetadata = z
  .strictObject({
    name: z.string(),
    versions: z.array(z.string()).describe('The versions this instance serves (active, loaded candidate).'),
    platform: z.literal('onnxruntime_onnx'),
    inputs: z.array(TensorMetadata),
    outputs: z.array(TensorMetadata),
  })
  .meta({
    id: 'OipModelMetadata',
    description: "A model's versions and tensors (from the ONNX graph, or the manifest).",
  });

const InferInput = z
  .strictObject({
    name: z.string().describe('One of the model inputs.'),
    shape: z.array(z.int().min(0)).describe("The tensor's dims (the model's fixed ones; no empty tensor)."),
    datatype: Datatype,
    parameters: Parameters.optional(),
    data: z.array(z.unknown()).describe('Row-major elements, flat or nested to the shape: numbers (BOOL: booleans).'),
  })
  .meta({ id: 'OipInferInput', description: 'An input tensor of an inference request.' });

const InferRequest = z
  .strictObject({
    id: z.string().optional().describe('Echoed in the answer.'),
    parameters: Parameters.optional(),
    inputs: z.array(InferInput).min(1).describe('Every model input, once'),
    outputs: z
      .array(z.strictObject({ name: z.string(), parameters: Parameters.optional() }))
      .min(1)
      .optional()
      .describe('The outputs to answer (default every one, in the model order)'),
  })
  .meta({ id: 'OipInferRequest', description: 'An inference request, parsed by lib/oip/infer-request.ts.' });

const InferOutput = z
  .strictObject({
    name: z.string(),
    datatype: Datatype,
    shape: z.array(z.number()),
    data: z.array(z.union([z.number(), z.boolean()]).nullable()).describe('Flat, row-major; non-finite as `null`.'),
  })
  .meta({ id: 'OipInferOutput', description: 'An output tensor of an inference answer.' });

const InferResponse = z
  .strictObject({
    model_name: z.string(),
    model_version: z.string().describe('The version that ran (also header `x-model-version`).'),
    id: z.string().optional(),
    parameters: Parameters.describe('`queue_ms`, `inference_ms` (ms) and `batch_size` (rows of the batch it ran in).'),
    outputs: z.array(InferOutput),
  })
  .meta({ id: 'OipInferResponse', description: 'An inference answer (written by `JSON.stringify`).' });

const Ready = <S extends z.ZodRawShape>(id: string, description: string, shape: S) =>
  z.strictObject({ ...shape, ready: z.literal(true) }).meta({ id, description });

const NOT_READY = [{ status: 400, description: '`OipError`: not ready, and why' }] as const;

export const oipServerMetadata = defineContract({
  name: 'oipServerMetadata',
  method: 'GET',
  route: 'v2',
  auth: 'function',
  summary: 'Open Inference Protocol: the server metadata.',
  status: 200,
  response: ServerMetadata,
  error: OipError,
});

export const oipServerLive = defineContract({
  name: 'oipServerLive',
  method: 'GET',
  route: 'v2/health/live',
  auth: 'anonymous',
  summary: 'Open Inference Protocol: the process is up.',
  status: 200,
  response: z.strictObject({ live: z.literal(true) }).meta({ id: 'OipLive', description: 'Live.' }),
  error: OipError,
});

export const oipServerReady = defineContract({
  name: 'oipServerReady',
  method: 'GET',
  route: 'v2/health/ready',
  auth: 'anonymous',
  summary:
    'Open Inference Protocol: ready when `/api/health/ready` would be (a sample inference through the active model).',
  status: 200,
  response: Ready('OipServerReady', 'Ready: a sample inference through the active model succeeded.', {}),
  otherAnswers: NOT_READY,
  error: OipError,
});

const modelName = { name: pathParam('The model name.') };
const withVersion = { ...modelName, version: pathParam('Exactly this version (loaded here).') };

/** A model route's two contracts: `v2/models/{name}{suffix}` and `v2/models/{name}/versions/{version}{suffix}`. */
function modelRoutes<const P extends Omit<Contract, 'name' | 'route' | 'params' | 'method' | 'auth'>>(
  name: string,
  method: Method,
  suffix: string,
  parts: P,
) {
  const base = { method, auth: 'function', error: OipError, ...parts } as const;
  return [
    defineContract({ ...base, name, route: `v2/models/{name}${suffix}`, params: z.strictObject(modelName) }),
    defineContract({
      ...base,
      name: `${name}Version`,
      route: `v2/models/{name}/versions/{version}${suffix}`,
      params: z.strictObject(withVersion),
    }),
  ] as const;
}

/** `oipModelMetadata`, `oipModelMetadataVersion`. */
export const oipModelMetadata = modelRoutes('oipModelMetadata', 'GET', '', {
  summary: 'Open Inference Protocol: the model metadata (404: unknown model or version).',
  status: 200,
  response: ModelMetadata,
});

/** `oipModelReady`, `oipModelReadyVersion`. */
export const oipModelReady = modelRoutes('oipModelReady', 'GET', '/ready', {
  summary: 'Open Inference Protocol: whether the model (or version) is loaded here (404: unknown).',
  status: 200,
  response: Ready('OipModelReady', 'Ready: the model (or the version named) is loaded here.', {
    name: z.string(),
    version: z.string().optional(),
  }),
  otherAnswers: NOT_READY,
});

/** `oipModelInfer`, `oipModelInferVersion`. */
export const oipModelInfer = modelRoutes('oipModelInfer', 'POST', '/infer', {
  summary:
    'Open Inference Protocol: inference on the active version, or exactly the one named (header `x-deadline-ms`; body at most `OIP_BODY_LIMIT_BYTES`).',
  body: InferRequest,
  status: 200,
  response: InferResponse,
  jsonStringify: true,
});

/** The Open Inference Protocol contracts, in the reference page's order. */
export const OIP_CONTRACTS = [
  oipServerMetadata,
  oipServerLive,
  oipServerReady,
  ...oipModelMetadata,
  ...oipModelReady,
  ...oipModelInfer,
] as const;
