import * as ort from 'onnxruntime-node';
import { AppError } from '../errors/errors';
import type { BackendFactory, BackendInfo, RunOptions, RunResult, SessionOptions } from './backend';
import type { BatchExecutor } from './batch-executor';

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
 * Runs `rows` rows through a session: builds the `[rows, width]` float32 input, returns the first
 * output's values (one score per row). Synchronous native work happens inside `session.run`.
 */
export async function runSession(
  session: ort.InferenceSession,
  inputName: string,
  outputName: string,
  input: Float32Array,
  rows: number,
  width: number,
): Promise<Float32Array> {
  const tensor = new ort.Tensor('float32', input.length === rows * width ? input : input.subarray(0, rows * width), [
    rows,
    width,
  ]);
  const out = await session.run({ [inputName]: tensor });
  const t = out[outputName];
  if (t === undefined || t.type !== 'float32' || t.data.length !== rows) {
    throw new AppError('inference_failed', `Model output "${outputName}" has an unexpected type or shape.`);
  }
  return t.data as Float32Array;
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
      ...(loaded.fallbackReason === undefined ? {} : { fallbackReason: loaded.fallbackReason }),
    };
    return new InlineOrtBackend(loaded, info, now);
  }

  async run(input: Float32Array, rows: number, _options?: RunOptions): Promise<RunResult> {
    const n = rows * this.info.inputWidth;
    if (!Number.isInteger(rows) || rows < 1 || input.length < n) {
      throw new AppError('inference_failed', `Expected ${n} input values for ${rows} row(s).`, { transient: false });
    }
    const t0 = this.now();
    // onnxruntime-node defers the (blocking) native run to a setImmediate queued synchronously by
    // session.run(); an immediate queued just before fires right before it, separating the wait for
    // the event loop's check phase (queueMs) from the native run itself (inferenceMs).
    let started = Number.NaN;
    setImmediate(() => (started = this.now()));
    const scores = await runSession(
      this.loaded.session,
      this.info.inputName,
      this.info.outputName,
      input,
      rows,
      this.info.inputWidth,
    );
    const end = this.now();
    if (Number.isNaN(started)) started = t0;
    return { scores, timing: { queueMs: started - t0, inferenceMs: end - started, batchSize: rows } };
  }

  async dispose(): Promise<void> {
    await this.loaded.session.release();
  }
}

/** Factory for {@link InlineOrtBackend}. */
export function inlineBackendFactory(options: SessionOptions): BackendFactory {
  return { load: (model) => InlineOrtBackend.create(model, options) };
}
