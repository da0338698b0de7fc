import * as ort from 'onnxruntime-node';
import { AppError } from '../errors/errors';
import { readOnnxSignature, type OnnxSignature } from './onnx-signature';
import type { BackendFactory, BackendInfo, RunOptions, RunResult, SessionOptions } from './backend';
import type { BatchExecutor } from './batch-executor';
import { scoreRows } from './score-rows';
import {
  checkRequest,
  isTensorType,
  type NamedTensor,
  type TensorData,
  type TensorRequest,
  type TensorResult,
} from './tensor';

/** The graph signature of `bytes`, or `undefined` if it cannot be read (ONNX Runtime then has the last word). */
export function signatureOf(bytes: Uint8Array): OnnxSignature | undefined {
  try {
    return readOnnxSignature(bytes);
  } catch {
    return undefined;
  }
}

/** A loaded ONNX Runtime session plus the providers it really uses. */
export interface LoadedSession {
  readonly session: ort.InferenceSession;
  readonly executionProviders: readonly string[];
  readonly fallbackReason?: string;
}

/**
 * Creates a session with the requested providers; if that fails (provider not built in, no device),
 * falls back to CPU and says why. Never throws for an unavailable provider; throws `model_invalid`
 * if even CPU cannot load the model.
 */
export async function createSession(bytes: Uint8Array, options: SessionOptions): Promise<LoadedSession> {
  const base: ort.InferenceSession.SessionOptions = {
    graphOptimizationLevel: options.graphOptimization,
    ...(options.intraOpThreads > 0 ? { intraOpNumThreads: options.intraOpThreads } : {}),
  };
  const requested = options.executionProviders.length > 0 ? options.executionProviders : ['cpu'];
  let fallbackReason: string | undefined;
  if (requested.some((p) => p !== 'cpu')) {
    try {
      const session = await ort.InferenceSession.create(bytes, { ...base, executionProviders: [...requested] });
      return { session, executionProviders: requested };
    } catch (err) {
      fallbackReason = `execution providers [${requested.join(', ')}] unavailable (${(err as Error).message.split('\n')[0] ?? ''}); using cpu`;
    }
  }
  try {
    const session = await ort.InferenceSession.create(bytes, { ...base, executionProviders: ['cpu'] });
    return { session, executionProviders: ['cpu'], ...(fallbackReason === undefined ? {} : { fallbackReason }) };
  } catch (err) {
    throw new AppError(
      'model_invalid',
      `ONNX Runtime could not load the model: ${(err as Error).message.split('\n')[0] ?? ''}`,
      {
        cause: err,
        transient: false,
      },
    );
  }
}

/**
 * Runs named tensors through a session and returns the requested outputs as owned copies (safe to keep or
 * transfer). Synchronous native work happens inside `session.run`.
 * @throws AppError `inference_failed` (not transient) when ONNX Runtime refuses the inputs or an output is missing or of an unsupported type.
 */
export async function runTensors(
  session: ort.InferenceSession,
  inputs: readonly NamedTensor[],
  outputs: readonly string[],
): Promise<NamedTensor[]> {
  const feeds: Record<string, ort.Tensor> = {};
  for (const t of inputs) feeds[t.name] = new ort.Tensor(t.type, t.data, [...t.dims]);
  let out: ort.InferenceSession.ReturnType;
  try {
    out = await session.run(feeds, [...outputs]);
  } catch (err) {
    throw new AppError('inference_failed', `Inference failed: ${(err as Error).message.split('\n')[0] ?? ''}`, {
      cause: err,
      transient: false,
    });
  }
  return outputs.map((name) => {
    const t = out[name];
    if (t === undefined || !isTensorType(t.type))
      throw new AppError('inference_failed', `Model output "${name}" is missing or of an unsupported type.`, {
        transient: false,
      });
    return { name, type: t.type, dims: [...t.dims], data: (t.data as TensorData).slice() };
  });
}

/**
 * In-process backend: one session on the calling thread. Inference blocks the event loop for its
 * duration; fine for tiny models, and the baseline the worker pool is measured against.
 */
export class InlineOrtBackend implements BatchExecutor {
  /** One batch at a time: runs share the event-loop thread. */
  readonly concurrency = 1;

  private constructor(
    private readonly loaded: LoadedSession,
    readonly info: BackendInfo,
    private readonly now: () => number,
  ) {}

  /** Loads `bytes` into a session on this thread. */
  static async create(
    model: { bytes: Uint8Array; inputName: string; outputName: string; inputWidth: number },
    options: SessionOptions,
    now: () => number = () => performance.now(),
  ): Promise<InlineOrtBackend> {
    const loaded = await createSession(model.bytes, options);
    const info: BackendInfo = {
      inputName: model.inputName,
      outputName: model.outputName,
      inputWidth: model.inputWidth,
      executionProviders: loaded.executionProviders,
      ...withSignature(model.bytes),
      ...(loaded.fallbackReason === undefined ? {} : { fallbackReason: loaded.fallbackReason }),
    };
    return new InlineOrtBackend(loaded, info, now);
  }

  run(input: Float32Array, rows: number, options?: RunOptions): Promise<RunResult> {
    return scoreRows(this, input, rows, options);
  }

  async infer(request: TensorRequest, _options?: RunOptions): Promise<TensorResult> {
    checkRequest(request);
    const t0 = this.now();
    // onnxruntime-node defers the (blocking) native run to a setImmediate queued synchronously by
    // session.run(); an immediate queued just before fires right before it, separating the wait for
    // the event loop's check phase (queueMs) from the native run itself (inferenceMs).
    let started = Number.NaN;
    setImmediate(() => (started = this.now()));
    const outputs = await runTensors(this.loaded.session, request.inputs, request.outputs);
    const end = this.now();
    if (Number.isNaN(started)) started = t0;
    return { outputs, timing: { queueMs: started - t0, inferenceMs: end - started, batchSize: request.rows ?? 1 } };
  }

  async dispose(): Promise<void> {
    await this.loaded.session.release();
  }
}

/** `{ signature }` of `bytes` when readable, else `{}` (for building a {@link BackendInfo}). */
export function withSignature(bytes: Uint8Array): { signature?: OnnxSignature } {
  const signature = signatureOf(bytes);
  return signature === undefined ? {} : { signature };
}

/** Factory for {@link InlineOrtBackend}. */
export function inlineBackendFactory(options: SessionOptions): BackendFactory {
  return { load: (model) => InlineOrtBackend.create(model, options) };
}
