import { AppError, toAppError } from '../errors/errors';
import type { ModelManifest } from '../models/manifest';
import type { ModelArtifact, ModelSource } from '../models/model-folder';
import type { BackendFactory, InferenceBackend } from './backend';
import { VersionLeases, type HeldVersion, type Lease } from './version-leases';

/** Outcome of a readiness probe (the sample inference). */
export type Readiness =
  | {
      readonly ready: true;
      readonly model: { readonly name: string; readonly version: string };
      readonly executionProviders: readonly string[];
      readonly fallbackReason?: string;
    }
  | {
      readonly ready: false;
      readonly reason: string;
      /** The loaded version whose sample inference failed, if one is loaded. */
      readonly model?: { readonly name: string; readonly version: string };
    };

/** Readiness as last established, without running anything: the last sample inference and when it ran. */
export type Health = Readiness & {
  /** Wall-clock time (epoch ms) of the sample inference behind this state; absent before the first. */
  readonly checkedAt?: number;
};

/** Probe outcomes that mean "busy", not "broken": they leave the last readiness as it was. */
const BUSY_CODES: ReadonlySet<string> = new Set(['overloaded', 'deadline_exceeded']);

/** Deadline of a background sample inference, ms: generous, it is not a request. */
const PROBE_DEADLINE_MS = 5000;

/** Events a session manager emits (for telemetry and logs). */
export interface SessionManagerEvents {
  loaded(e: {
    name: string;
    version: string;
    executionProviders: readonly string[];
    fallbackReason?: string;
    loadMs: number;
  }): void;
  loadFailed(e: { reason: string }): void;
  released(e: { name: string; version: string }): void;
}

/** Dependencies of a {@link SessionManager}. */
export interface SessionManagerDeps {
  readonly source: ModelSource;
  readonly factory: BackendFactory;
  /** Monotonic clock, ms. Default `performance.now`. */
  readonly now?: () => number;
  /** Wall clock, epoch ms (when readiness was last checked). Default `Date.now`. */
  readonly wallNow?: () => number;
  readonly on?: Partial<SessionManagerEvents>;
}

/** A sample input row for warm-up and readiness: the manifest's first golden row, or the feature baseline, or zeros. */
export function sampleRow(manifest: ModelManifest, width: number): Float32Array {
  const row = manifest.golden?.inputs[0] ?? manifest.explanation?.baseline ?? [];
  const out = new Float32Array(width);
  out.set(row.slice(0, width));
  return out;
}

/** Checks a score vector: expected length, finite, within [0, 1]. Returns the problem or `undefined`. */
export function checkScores(scores: Float32Array, rows: number): string | undefined {
  if (scores.length !== rows) return `expected ${rows} score(s), got ${scores.length}`;
  for (const s of scores) if (!Number.isFinite(s) || s < 0 || s > 1) return 'a score is not a finite number in [0, 1]';
  return undefined;
}

/**
 * Owns the active model version of one process: loads it once (single-flight, however many callers
 * race), warms it, hands out refcounted leases, swaps versions atomically, and releases a retired
 * version's native memory when its last lease ends.
 */
export class SessionManager {
  private active: HeldVersion | undefined;
  private loading: Promise<void> | undefined;
  private lastError: AppError | undefined;
  private disposed = false;
  private readonly versions: VersionLeases;
  private readonly now: () => number;
  private readonly wallNow: () => number;
  private last: Health | undefined;
  private probing: Promise<Readiness> | undefined;

  private constructor(private readonly deps: SessionManagerDeps) {
    this.now = deps.now ?? (() => performance.now());
    this.wallNow = deps.wallNow ?? (() => Date.now());
    this.versions = new VersionLeases((m) => this.deps.on?.released?.({ name: m.name, version: m.version }));
  }

  /** Creates a manager; nothing is loaded until {@link ensureReady}. */
  static async create(deps: SessionManagerDeps): Promise<SessionManager> {
    return new SessionManager(deps);
  }

  /** Whether a model is loaded and warm. */
  get isReady(): boolean {
    return this.active !== undefined;
  }

  /** The active manifest, if any. */
  get manifest(): ModelManifest | undefined {
    return this.active?.manifest;
  }

  /** Loads and warms the model if not yet done; concurrent callers share one load. */
  ensureReady(): Promise<void> {
    if (this.active !== undefined) return Promise.resolve();
    this.loading ??= this.loadFromSource().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async loadFromSource(): Promise<void> {
    try {
      const artifact = await this.deps.source.load();
      await this.install(artifact);
      this.lastError = undefined;
    } catch (err) {
      this.lastError = toAppError(err);
      this.deps.on?.loadFailed?.({ reason: this.lastError.message });
      throw this.lastError;
    }
  }

  /** Loads, warms and checks an artifact without installing it. The caller owns the returned backend. */
  async prepare(artifact: ModelArtifact): Promise<InferenceBackend> {
    const { manifest, bytes } = artifact;
    const width = manifest.input.shape[manifest.input.shape.length - 1] ?? 0;
    const backend = await this.deps.factory.load({
      bytes,
      inputName: manifest.input.name,
      outputName: manifest.output.name,
      inputWidth: width,
    });
    try {
      const { scores } = await backend.run(sampleRow(manifest, width), 1);
      const problem = checkScores(scores, 1);
      if (problem !== undefined)
        throw new AppError('model_invalid', `Warm-up inference failed: ${problem}.`, { transient: false });
    } catch (err) {
      await backend.dispose();
      throw err instanceof AppError
        ? err
        : new AppError('model_invalid', 'Warm-up inference failed.', { cause: err, transient: false });
    }
    return backend;
  }

  /** Loads, warms and atomically installs an artifact as the active version. */
  async install(artifact: ModelArtifact): Promise<void> {
    const t0 = this.now();
    const backend = await this.prepare(artifact);
    this.activate(artifact.manifest, backend, { probe: false }); // its warm-up inference ran in prepare()
    const m = artifact.manifest;
    this.deps.on?.loaded?.({
      name: m.name,
      version: m.version,
      executionProviders: backend.info.executionProviders,
      ...(backend.info.fallbackReason === undefined ? {} : { fallbackReason: backend.info.fallbackReason }),
      loadMs: this.now() - t0,
    });
  }

  /**
   * Makes a prepared backend the active version in one step; the old one is released after its last lease.
   * Readiness is refreshed at once: from the sample inference the backend passed when it was prepared or
   * validated, then, unless `probe` is false (its warm-up ran just now), by a fresh {@link probe}.
   */
  activate(manifest: ModelManifest, backend: InferenceBackend, options: { readonly probe?: boolean } = {}): void {
    if (this.disposed) {
      void backend.dispose();
      throw new AppError('model_not_ready', 'The session manager is disposed.');
    }
    const old = this.active;
    this.active = this.versions.hold(manifest, backend);
    old?.drop();
    this.last = {
      ready: true,
      model: { name: manifest.name, version: manifest.version },
      executionProviders: backend.info.executionProviders,
      ...(backend.info.fallbackReason === undefined ? {} : { fallbackReason: backend.info.fallbackReason }),
      checkedAt: this.wallNow(),
    };
    if (options.probe !== false) void this.probe().catch(() => undefined); // a probe records its own failures
  }

  /**
   * Stops serving the active version without disposing the manager (a canary candidate withdrawn); it is
   * released after its last lease ends. {@link acquire} then fails with `model_not_ready` until the next {@link activate}.
   */
  retire(): void {
    const old = this.active;
    this.active = undefined;
    this.last = undefined;
    old?.drop();
  }

  /**
   * Takes a lease on the active version.
   * @throws AppError `model_not_ready` (503, Retry-After) when no model is loaded.
   */
  acquire(): Lease {
    const slot = this.active;
    if (slot === undefined) {
      throw new AppError(
        'model_not_ready',
        this.lastError === undefined
          ? 'The model is loading.'
          : `The model is not available: ${this.lastError.message}`,
        {
          retryAfterSec: 1,
        },
      );
    }
    return slot.lease();
  }

  /**
   * Readiness as last established (the last sample inference: at load/swap, then by {@link probe}),
   * without running anything. Not ready while nothing is loaded, with the load error if there was one.
   */
  get health(): Health {
    if (this.active === undefined) return { ready: false, reason: this.lastError?.message ?? 'The model is loading.' };
    return this.last ?? { ready: false, reason: 'The model has not been checked yet.' };
  }

  /**
   * Runs a sample inference through the active version, checks output shape, finiteness and range, and
   * keeps the outcome as {@link health}. Concurrent calls share one run. A busy outcome (`overloaded`,
   * `deadline_exceeded`: scoring traffic filled the queue) leaves the last readiness unchanged: busy is
   * not broken. Called in the background (`ReadinessMonitor`) and after every swap, never per request.
   */
  probe(): Promise<Readiness> {
    this.probing ??= this.runProbe().finally(() => (this.probing = undefined));
    return this.probing;
  }

  private async runProbe(): Promise<Readiness> {
    if (this.active === undefined) return this.health;
    const lease = this.acquire();
    const { manifest, backend } = lease;
    const model = { name: manifest.name, version: manifest.version };
    let r: Readiness;
    try {
      const { scores } = await backend.run(sampleRow(manifest, backend.info.inputWidth), 1, {
        deadline: this.now() + PROBE_DEADLINE_MS,
      });
      const problem = checkScores(scores, 1);
      r =
        problem !== undefined
          ? { ready: false, model, reason: `Sample inference failed: ${problem}.` }
          : {
              ready: true,
              model,
              executionProviders: backend.info.executionProviders,
              ...(backend.info.fallbackReason === undefined ? {} : { fallbackReason: backend.info.fallbackReason }),
            };
    } catch (err) {
      const e = toAppError(err);
      if (BUSY_CODES.has(e.code) && this.last !== undefined) return this.last;
      r = { ready: false, model, reason: `Sample inference failed: ${e.message}` };
    } finally {
      lease.release();
    }
    // a swap during the run already recorded the new version's state: keep it
    if (this.active?.manifest === manifest) this.last = { ...r, checkedAt: this.wallNow() };
    return r;
  }

  /** Stops serving; the active version is released once its last lease ends (awaited when none is held). */
  async dispose(): Promise<void> {
    this.disposed = true;
    await this.loading?.catch(() => undefined);
    const old = this.active;
    this.active = undefined;
    old?.drop();
    // Wait for releases already under way (e.g. worker threads closing), so a process exiting right
    // after dispose does not tear native sessions down mid-release.
    await this.versions.drained();
  }
}
