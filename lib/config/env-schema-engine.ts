/**
 * The engine's settings (part of {@link envSchema} in `env-schema.ts`): the model served, ONNX Runtime, the inference
 * queue and its batches, request deadlines, and admission.
 */
import { z } from 'zod';
import { emptyToUndefined, int, num, optStr } from './zod-helpers';

/** The ONNX Runtime execution providers `ORT_EXECUTION_PROVIDERS` accepts. */
export const PROVIDERS = ['cpu', 'cuda', 'dml', 'coreml', 'tensorrt'] as const;

/** The environment variables of the model, ONNX Runtime, inference and admission (merged into the config's schema). */
export const engineEnv = {
  MODEL_DIR: optStr.describe(
    'Models folder (`{name}/{version}.onnx` + `.json`), relative to the app root; unset = `models`.',
  ),
  MODEL_NAME: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,63}$/, { error: 'must be a model name like fraud' })
        .default('fraud'),
    )
    .describe('Name of the model the service serves.'),
  MODEL_VERSION: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^\d+\.\d+\.\d+$/, { error: 'must be a semantic version like 1.0.0' })
        .optional(),
    )
    .describe(
      "Pins the version served while no rollout pointer names one; unset = the version the models folder's `shipped.json` names (a folder without it: its newest).",
    ),
  ORT_EXECUTION_PROVIDERS: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .default('cpu')
        .transform((s) =>
          s
            .split(',')
            .map((p) => p.trim().toLowerCase())
            .filter((p) => p !== ''),
        )
        .pipe(z.array(z.enum(PROVIDERS, { error: `each provider must be one of ${PROVIDERS.join(', ')}` })).min(1)),
    )
    .describe(
      'ONNX Runtime execution providers, comma-separated in order of preference (e.g. `cuda,cpu`); an unavailable one falls back to CPU.',
    ),
  ORT_INTRA_OP_THREADS: int(0, 64, 1).describe('Intra-op threads per ONNX Runtime session (0 = ONNX Runtime default).'),
  ORT_GRAPH_OPTIMIZATION: z
    .preprocess(emptyToUndefined, z.enum(['disabled', 'basic', 'extended', 'all']).default('all'))
    .describe('ONNX Runtime graph optimization level.'),
  INFERENCE_WORKERS: int(0, 64, 0).describe(
    'Inference worker threads; 0 = auto: (cores − 1) ÷ intra-op threads, at least 1. On GPU each worker holds its own CUDA session.',
  ),
  INFERENCE_MODE: z
    .preprocess(
      emptyToUndefined,
      z.enum(['auto', 'workers', 'inline'], { error: 'must be one of auto, workers, inline' }).default('auto'),
    )
    .describe(
      'Where sessions run: `workers` (worker threads), `inline` (on the event loop), `auto` (inline for models ≤ 256 KiB, else workers).',
    ),
  BATCH_MAX_SIZE: int(1, 4096, 64).describe(
    'Largest micro-batch (rows) on CPU, and after a CUDA load fell back to CPU.',
  ),
  BATCH_MAX_SIZE_GPU: int(1, 4096, 32).describe(
    'Largest micro-batch (rows) while a GPU provider is active; replaces `BATCH_MAX_SIZE`.',
  ),
  BATCH_WINDOW_MS: num(0, 1000, 5).describe(
    'While every worker is busy, a batch closes this long after its first request, ms.',
  ),
  INFERENCE_QUEUE_MAX: int(1, 1_000_000, 2048).describe(
    'Bound of the inference queue, rows; past it requests are refused with 503 `overloaded`.',
  ),
  REQUEST_DEADLINE_MS: int(1, 60_000, 1000).describe(
    'Default per-request deadline, ms: how long a caller waits, counted from when the invocation reaches the app (body reading included). A valid request is refused (503) only when the work ahead of it cannot finish within it. Not the latency objective (50 ms), which is a target, not a refusal rule.',
  ),
  REQUEST_DEADLINE_MAX_MS: int(1, 600_000, 2000).describe(
    'Largest deadline a caller may ask for with `x-deadline-ms`, ms; also caps batch deadlines and is the Service Bus batch deadline.',
  ),
  BATCH_DEADLINE_PER_EVENT_MS: num(0, 10_000, 2).describe(
    "A batch request's default deadline grows by this per valid event after the first, ms (capped at `REQUEST_DEADLINE_MAX_MS`).",
  ),
  ADMISSION_MAX_INFLIGHT: int(1, 1_000_000, 1024).describe(
    'Most requests inside the engine at once (HTTP and Service Bus together): a ceiling that protects memory, beside admission by deadline.',
  ),
  ADMISSION_MIN_INFLIGHT: int(1, 1_000_000, 16).describe(
    'Admission by deadline refuses nothing while fewer than this many requests are inside the engine.',
  ),
  ADMISSION_INTERVAL_MS: int(1, 60_000, 100).describe(
    'Interval of the memory ceiling (the gate that caps requests inside at `ADMISSION_MAX_INFLIGHT`), ms.',
  ),
  ADMISSION_QUEUE_WAIT_MS: int(0, 60_000, 5000).describe(
    'How long a Service Bus delivery waits for an admission slot before it fails transiently and is redelivered, ms; 0 = no wait.',
  ),
};
