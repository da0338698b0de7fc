import { availableParallelism } from 'node:os';
import type { Config } from '../config/config';
import type { Logger } from '../platform/logger';
import type { BackendFactory, SessionOptions } from './backend';
import type { BatchExecutor, ModelInput } from './batch-executor';
import type { Timers } from '../platform/timers';
import type { BatcherEvents } from './batcher-types';
import { MicroBatcher } from './micro-batcher';
import { InlineOrtBackend } from './ort-session';
import { WorkerPool, type WorkerPoolEvents } from './worker-pool';

/**
 * Where sessions run: `workers` (worker threads, off the event loop), `inline` (on the calling
 * thread), or `auto` (inline for models up to {@link INLINE_MAX_MODEL_BYTES}, else workers).
 */
export type InferenceMode = 'auto' | 'workers' | 'inline';

/**
 * Largest model `auto` runs inline, bytes (256 KiB). For the bundled 0.7 KB model a batch costs about
 * 20 µs, less than a worker round trip; the benchmark measured inline ahead in 3 of 4 full runs (see
 * docs/inference.md). Anything bigger runs in workers.
 */
export const INLINE_MAX_MODEL_BYTES = 256 * 1024;

/** Resolves `auto` for a model of `modelBytes` bytes. */
export function resolveMode(mode: InferenceMode, modelBytes: number): 'workers' | 'inline' {
  if (mode !== 'auto') return mode;
  return modelBytes <= INLINE_MAX_MODEL_BYTES ? 'inline' : 'workers';
}

/** The inference slice of the configuration. */
export interface InferenceSettings {
  readonly mode: InferenceMode;
  /** Worker threads; 0 = auto ({@link autoWorkerCount}). */
  readonly workers: number;
  /** Most rows per batch on CPU (`BATCH_MAX_SIZE`, default 64). */
  readonly batchMaxSize: number;
  /** Most rows per batch when a GPU provider is active, replacing `batchMaxSize` (`BATCH_MAX_SIZE_GPU`, default 32). */
  readonly batchMaxSizeGpu: number;
  /** Batch window while workers are busy, ms (`BATCH_WINDOW_MS`, default 5). */
  readonly batchWindowMs: number;
  /** Most queued rows (`INFERENCE_QUEUE_MAX`, default 2048). */
  readonly queueMax: number;
  readonly session: SessionOptions;
}

/** The inference settings of `config` (`INFERENCE_*`, `BATCH_*`, `ORT_*`), `overrides` applied. */
export function inferenceSettings(
  config: Pick<Config, 'inference' | 'ort'>,
  overrides: Partial<Omit<InferenceSettings, 'session'>> = {},
): InferenceSettings {
  const { ort } = config;
  return {
    ...config.inference,
    ...overrides,
    session: {
      executionProviders: ort.executionProviders,
      intraOpThreads: ort.intraOpThreads,
      graphOptimization: ort.graphOptimization,
    },
  };
}

/** Optional hooks and seams of {@link batchedBackendFactory}. */
export interface BatchedFactoryDeps {
  readonly batcher?: Partial<BatcherEvents>;
  readonly pool?: Partial<WorkerPoolEvents>;
  /** Logical cores; default `os.availableParallelism()`. */
  readonly cores?: number;
  readonly now?: () => number;
  readonly scheduler?: Timers;
}

/**
 * Default worker count: one per core left after the event loop's, divided by the intra-op threads
 * each session uses; at least 1. On 2 cores with 1 intra-op thread: 1 worker.
 */
export function autoWorkerCount(cores: number, intraOpThreads: number): number {
  return Math.max(1, Math.floor((cores - 1) / Math.max(1, intraOpThreads)));
}

/** True when the first provider in use is a GPU one (then `batchMaxSizeGpu` is the batch cap). */
export function isGpuProvider(providers: readonly string[]): boolean {
  const p = providers[0];
  return p !== undefined && p !== 'cpu';
}

/**
 * Most rows per batch for the provider in use: `BATCH_MAX_SIZE_GPU` replaces `BATCH_MAX_SIZE` when a GPU
 * provider is active (it may be larger: a T4 runs 48 rows in about the time a CPU core runs a few), else
 * `BATCH_MAX_SIZE` (also after a CUDA load fell back to CPU).
 */
export function batchCap(
  settings: { readonly batchMaxSize: number; readonly batchMaxSizeGpu: number },
  gpu: boolean,
): number {
  return gpu ? settings.batchMaxSizeGpu : settings.batchMaxSize;
}

/**
 * The production backend factory: each loaded model version gets a {@link MicroBatcher} in front of a
 * {@link WorkerPool} (or of an in-process session in inline mode). Disposing the batcher drains it and
 * stops the workers.
 */
export function batchedBackendFactory(settings: InferenceSettings, deps: BatchedFactoryDeps = {}): BackendFactory {
  return {
    async load(model: ModelInput) {
      let executor: BatchExecutor;
      if (resolveMode(settings.mode, model.bytes.byteLength) === 'inline') {
        executor = await InlineOrtBackend.create(model, settings.session);
      } else {
        const size =
          settings.workers > 0
            ? settings.workers
            : autoWorkerCount(deps.cores ?? availableParallelism(), settings.session.intraOpThreads);
        executor = await WorkerPool.create(model, {
          size,
          session: settings.session,
          ...(deps.pool === undefined ? {} : { on: deps.pool }),
        });
      }
      const gpu = isGpuProvider(executor.info.executionProviders);
      return new MicroBatcher({
        executor,
        options: {
          maxBatchSize: batchCap(settings, gpu),
          windowMs: settings.batchWindowMs,
          queueMax: settings.queueMax,
        },
        ...(deps.now === undefined ? {} : { now: deps.now }),
        ...(deps.scheduler === undefined ? {} : { scheduler: deps.scheduler }),
        ...(deps.batcher === undefined ? {} : { on: deps.batcher }),
      });
    },
  };
}

/** Logs the pool's lifecycle events (worker exits and replacements); per-batch events are left to telemetry. */
export function inferenceLogEvents(logger: Logger): Pick<BatchedFactoryDeps, 'pool'> {
  return {
    pool: {
      workerExit: (e) =>
        logger.warn('inference worker exited; replacing it', {
          workerId: e.workerId,
          exitCode: e.exitCode,
          failedRuns: e.failedRuns,
          reason: e.reason,
        }),
      respawnFailed: (e) =>
        logger.error('inference worker could not load the model', {
          workerId: e.workerId,
          reason: e.reason,
          retryInMs: e.retryInMs,
        }),
      workerReady: (e) => {
        if (e.replacement)
          logger.info('inference worker replaced', { workerId: e.workerId, loadMs: Math.round(e.loadMs) });
      },
    },
  };
}
