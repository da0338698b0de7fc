/**
 * Validation of a model version before anything serves it: sha256, manifest against the featurizer, graph
 * signature, load and warm-up in a worker (through the session manager's `prepare`, i.e. the production
 * backend factory), warm-up at every batch size the batcher uses, the golden set (finite scores in [0, 1],
 * and the manifest's recorded golden scores reproduced), and the score shift against the active version.
 */
import { toAppError } from '../errors/errors';
import type { BackendFactory, InferenceBackend } from '../inference/backend';
import { batchCap, isGpuProvider } from '../inference/backend-factory';
import { checkScores, sampleRow, type SessionManager } from '../inference/session-manager';
import type { ModelManifest } from '../models/manifest';
import type { FeatureSupport } from '../models/model-folder';
import type { ShiftReport, ValidationSummary } from './fleet-state';
import { noopTracer, type StageTracer } from '../platform/stage-tracer';
import {
  checkArtifact,
  checkRecorded,
  ModelRejectedError,
  scoreRows,
  scoreShift,
  warmupBatchSizes,
  type CheckStep,
  type ValidationRequest,
} from './model-checks';

export {
  GOLDEN_TOLERANCE,
  ModelRejectedError,
  sha256Async,
  warmupBatchSizes,
  type ValidationRequest,
} from './model-checks';

/** Dependencies of a {@link ModelValidator}. */
export interface ModelValidatorDeps {
  /** Loads and warms through the production backend factory (worker threads). */
  readonly sessions: Pick<SessionManager, 'prepare'>;
  /** What a manifest's features are verified against: the signals version it names computes each. */
  readonly features: FeatureSupport;
  /** `BATCH_MAX_SIZE` and `BATCH_MAX_SIZE_GPU`. */
  readonly batchMaxSize: number;
  readonly batchMaxSizeGpu: number;
  /**
   * A worker-thread factory that loads (and warms, then releases) a model first whenever `when(bytes)` says the
   * serving factory would load it inline (`INFERENCE_MODE=auto` runs tiny models inline): every upload is
   * loaded in isolation, off the event loop, before anything serves it.
   */
  readonly isolation?: { readonly factory: BackendFactory; readonly when: (modelBytes: number) => boolean };
  /** Monotonic clock, ms. Default `performance.now`. */
  readonly now?: () => number;
  /** Each check runs in a `model.check.<check>` span. Default: no spans. */
  readonly tracer?: StageTracer;
}

/** Validates model versions; see the module comment for the checks, in order. */
export class ModelValidator {
  private readonly now: () => number;
  constructor(private readonly deps: ModelValidatorDeps) {
    this.now = deps.now ?? (() => performance.now());
  }

  /**
   * Runs every check. On success the caller owns the loaded, warm backend.
   * @throws ModelRejectedError naming the failed check; transient AppErrors when the active version cannot be compared right now.
   */
  async validate(req: ValidationRequest): Promise<{ backend: InferenceBackend; summary: ValidationSummary }> {
    const { manifest, bytes } = req;
    const t0 = this.now();
    const tracer = this.deps.tracer ?? noopTracer;
    const step: CheckStep = (check, fn) => tracer.span(`model.check.${check}`, {}, async () => fn());
    await checkArtifact(req, this.deps.features, step);
    const golden = req.golden?.inputs ?? [];
    const width = manifest.features.length;
    const backend = await step('load', async () => {
      await this.probeInWorker(manifest, bytes);
      try {
        return await this.deps.sessions.prepare({ manifest, bytes });
      } catch (err) {
        const e = toAppError(err);
        throw new ModelRejectedError(
          e.message.startsWith('Warm-up') ? 'warmup' : 'load',
          e.message,
          e.errors,
          'model_invalid',
          err,
        );
      }
    });
    try {
      const gpu = isGpuProvider(backend.info.executionProviders);
      const batchSizes = warmupBatchSizes(batchCap(this.deps, gpu));
      const rows = [Array.from(sampleRow(manifest, width))]; // the golden set is checked on its own below
      await step('warmup', async () => {
        for (const b of batchSizes) {
          const problem = await scoreRows(backend, rows, b).then(
            (s) => checkScores(s, b),
            (err: unknown) => toAppError(err).message,
          );
          if (problem !== undefined)
            throw new ModelRejectedError('warmup', `Warm-up at batch size ${b} failed: ${problem}.`, [
              { path: 'model', message: `warm-up at batch size ${b}: ${problem}` },
            ]);
        }
      });
      let shift: ShiftReport | undefined;
      if (golden.length > 0) {
        const scores = await step('golden', async () => {
          const scores = await scoreRows(backend, golden, golden.length);
          const problem = checkScores(scores, golden.length);
          if (problem !== undefined)
            throw new ModelRejectedError('golden', `The golden set failed: ${problem}.`, [
              { path: 'golden', message: problem },
            ]);
          checkRecorded(manifest, req, scores);
          return scores;
        });
        shift = await step('shift', () => scoreShift(req, golden, scores));
      }
      return {
        backend,
        summary: {
          sizeBytes: bytes.length,
          batchSizes,
          goldenRows: golden.length,
          goldenSource: req.golden === undefined || golden.length === 0 ? 'none' : req.golden.source,
          ...(shift === undefined ? {} : { shift }),
          forced: req.forced,
          loadMs: Math.round(this.now() - t0),
        },
      };
    } catch (err) {
      await backend.dispose().catch(() => undefined);
      throw err;
    }
  }

  /** Loads and warms the model in a worker thread first, when the serving factory would load it inline. */
  private async probeInWorker(manifest: ModelManifest, bytes: Uint8Array): Promise<void> {
    const iso = this.deps.isolation;
    if (iso === undefined || !iso.when(bytes.length)) return;
    const width = manifest.features.length;
    let probe: InferenceBackend;
    try {
      probe = await iso.factory.load({
        bytes,
        inputName: manifest.input.name,
        outputName: manifest.output.name,
        inputWidth: width,
      });
    } catch (err) {
      const e = toAppError(err);
      throw new ModelRejectedError('load', e.message, e.errors, 'model_invalid', err);
    }
    try {
      const problem = await scoreRows(probe, [Array.from(sampleRow(manifest, width))], 1).then(
        (s) => checkScores(s, 1),
        (err: unknown) => toAppError(err).message,
      );
      if (problem !== undefined)
        throw new ModelRejectedError('warmup', `Warm-up in an isolated worker failed: ${problem}.`, [
          { path: 'model', message: problem },
        ]);
    } finally {
      await probe.dispose().catch(() => undefined);
    }
  }
}
