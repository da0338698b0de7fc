/**
 * The Open Inference Protocol (KServe V2 REST) over the engine's models: server and model metadata, model
 * readiness, and inference through the generic tensor path (the same micro-batcher, deadlines and admission
 * as `/api/score`).
 */
import { AppError, toAppError } from '../errors/errors';
import type { ModelCatalog, ServedModel } from './model-catalog';
import { parseInferRequest, type ModelView, type Parameters } from './infer-request';
import { tensorMetadata, viewOfSignature, type TensorMetadata } from './model-view';
import { outputJson, type OutputJson } from './tensor-json';

/** `GET v2`. */
export interface ServerMetadata {
  readonly name: string;
  readonly version: string;
  readonly extensions: readonly string[];
}

/** `GET v2/models/{name}[/versions/{version}]`. */
export interface ModelMetadata {
  readonly name: string;
  readonly versions: readonly string[];
  readonly platform: 'onnxruntime_onnx';
  readonly inputs: readonly TensorMetadata[];
  readonly outputs: readonly TensorMetadata[];
}

/** A readiness answer: `ready` false carries the reason. */
export type ReadyAnswer = { readonly ready: true } | { readonly ready: false; readonly reason: string };

/** `POST v2/models/{name}[/versions/{version}]/infer` response. */
export interface InferResponse {
  readonly model_name: string;
  readonly model_version: string;
  readonly id?: string;
  /** Timing of this request: `queue_ms`, `inference_ms` (ms) and `batch_size` (rows in the batch it ran in). */
  readonly parameters: Parameters;
  readonly outputs: readonly OutputJson[];
}

/** Dependencies of an {@link OipService}. */
export interface OipServiceDeps {
  /** Searched in order for a model name. */
  readonly catalogs: readonly ModelCatalog[];
  /** Server name and version (`GET v2`). */
  readonly server: { readonly name: string; readonly version: string };
  /** Whether the server is ready (the engine's readiness: a sample inference through the active model). */
  readonly ready: () => Promise<ReadyAnswer>;
  /** Monotonic clock, ms (the backend's). Default `performance.now`. */
  readonly now?: () => number;
}

/** The protocol's operations; adapters map their results and errors to HTTP. */
export class OipService {
  private readonly now: () => number;

  constructor(private readonly deps: OipServiceDeps) {
    this.now = deps.now ?? (() => performance.now());
  }

  /** Server metadata: name, version, extensions (none). */
  serverMetadata(): ServerMetadata {
    return { name: this.deps.server.name, version: this.deps.server.version, extensions: [] };
  }

  /** Server readiness. */
  serverReady(): Promise<ReadyAnswer> {
    return this.deps.ready();
  }

  private catalog(name: string): ModelCatalog {
    const c = this.deps.catalogs.find((k) => k.has(name));
    if (c === undefined) {
      const known = this.deps.catalogs.flatMap((k) => k.names);
      throw new AppError('not_found', `Unknown model "${name}"; this server serves: ${known.join(', ')}.`);
    }
    return c;
  }

  /**
   * Model metadata, from the loaded version's ONNX graph (or, for a validated version not loaded here, its manifest).
   * @throws AppError `not_found` (unknown model or version), `model_not_ready`.
   */
  async modelMetadata(name: string, version?: string): Promise<ModelMetadata> {
    const catalog = this.catalog(name);
    const versions = await catalog.versions(name);
    let view: ModelView | undefined;
    try {
      const served = await catalog.acquire(name, version);
      try {
        view = viewOf(served);
      } finally {
        served.release();
      }
    } catch (err) {
      if (version === undefined || toAppError(err).code !== 'conflict') throw err;
      view = await catalog.declared(name, version);
      if (view === undefined) throw err;
    }
    return {
      name,
      versions,
      platform: 'onnxruntime_onnx',
      inputs: view.inputs.map(tensorMetadata),
      outputs: view.outputs.map(tensorMetadata),
    };
  }

  /**
   * Whether the model (the active version, or exactly `version`) is loaded on this instance and can run.
   * @throws AppError `not_found` for an unknown model or version.
   */
  async modelReady(name: string, version?: string): Promise<ReadyAnswer> {
    const catalog = this.catalog(name);
    try {
      (await catalog.acquire(name, version)).release();
      return { ready: true };
    } catch (err) {
      const e = toAppError(err);
      if (e.code === 'not_found') throw e;
      return { ready: false, reason: e.message };
    }
  }

  /**
   * Runs an inference request on the active version, or on exactly `version`. The body is validated against
   * the model first; only a valid request goes through `options.admit` (the engine's admission), so a bad
   * one is answered `validation_failed` however loaded the instance is.
   * @param options.deadlineMs the request's inference deadline, ms from its arrival.
   * @param options.admit runs the inference as one admitted request, passing its arrival (ms, the
   *   backend's clock); default: run at once, arrived now.
   * @throws AppError `validation_failed` (bad request), `not_found`, `conflict` (version not loaded here),
   * `overloaded` / `deadline_exceeded` / `model_not_ready` (503), `inference_failed`.
   */
  async infer(
    name: string,
    version: string | undefined,
    body: unknown,
    options: { readonly deadlineMs: number; readonly admit?: OipAdmit<InferResponse> },
  ): Promise<InferResponse> {
    const served = await this.catalog(name).acquire(name, version);
    try {
      const parsed = parseInferRequest(body, viewOf(served));
      const run = async (arrivedAt: number): Promise<InferResponse> => {
        const deadline = arrivedAt + options.deadlineMs;
        const result = await served.backend.infer(parsed.request, { deadline, arrivedAt });
        return {
          model_name: name,
          model_version: served.version,
          ...(parsed.id === undefined ? {} : { id: parsed.id }),
          parameters: {
            queue_ms: round(result.timing.queueMs),
            inference_ms: round(result.timing.inferenceMs),
            batch_size: result.timing.batchSize,
          },
          outputs: result.outputs.map(outputJson),
        };
      };
      return await (options.admit ?? ((r) => r(this.now())))(run);
    } finally {
      served.release();
    }
  }
}

/** Runs a validated inference request as one admitted request, handing it its arrival (ms). */
export type OipAdmit<T> = (run: (arrivedAt: number) => Promise<T>) => Promise<T>;

function viewOf(served: ServedModel): ModelView {
  const sig = served.backend.info.signature;
  if (sig === undefined)
    throw new AppError('inference_failed', `The graph signature of "${served.name}" could not be read.`, {
      transient: false,
    });
  return viewOfSignature(sig);
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;
