/**
 * Live drift: per model version, the last `window` decided payments' bins for each feature and the score,
 * against the training distribution in the manifest (`drift`). Recording is a bin lookup per value into typed
 * arrays (no allocation); PSI is computed only when read (the telemetry gauge's collection).
 */
import type { ModelManifest } from '../models/manifest';
import { binOf, psi, type Bins } from './drift-bins';

/** One PSI reading. `series` is a feature name or `score`. */
export interface PsiReading {
  readonly modelVersion: string;
  readonly series: string;
  readonly psi: number;
  /** Payments in the window. */
  readonly samples: number;
}

/** Fewest payments in a window before PSI is reported (a handful of payments says nothing). */
export const DRIFT_MIN_SAMPLES = 100;
/** Model versions tracked at once (serving, canary, a retiring one). */
const MAX_VERSIONS = 4;

class VersionWindow {
  private readonly edges: Float64Array[];
  private readonly expected: Float64Array[];
  private readonly counts: Uint32Array[];
  private readonly ring: Uint8Array;
  private readonly dims: number;
  private next = 0;
  private filled = 0;

  constructor(
    readonly names: readonly string[],
    bins: readonly Bins[],
    private readonly window: number,
  ) {
    this.dims = bins.length;
    this.edges = bins.map((b) => Float64Array.from(b.edges));
    this.expected = bins.map((b) => Float64Array.from(b.expected));
    this.counts = bins.map((b) => new Uint32Array(b.expected.length));
    this.ring = new Uint8Array(window * this.dims);
  }

  add(row: Float32Array, score: number): void {
    const base = this.next * this.dims;
    const full = this.filled === this.window;
    for (let j = 0; j < this.dims; j++) {
      const counts = this.counts[j] as Uint32Array;
      if (full) counts[this.ring[base + j] as number]! -= 1;
      const b = binOf(this.edges[j] as Float64Array, j < this.dims - 1 ? (row[j] as number) : score);
      this.ring[base + j] = b;
      counts[b]! += 1;
    }
    this.next = (this.next + 1) % this.window;
    if (!full) this.filled++;
  }

  readings(version: string): PsiReading[] {
    if (this.filled < Math.min(DRIFT_MIN_SAMPLES, this.window)) return [];
    return this.names.map((series, j) => ({
      modelVersion: version,
      series,
      psi: psi(this.expected[j] as Float64Array, this.counts[j] as Uint32Array, this.filled),
      samples: this.filled,
    }));
  }
}

/** PSI per model version over a sliding window of decided payments. */
export class DriftMonitor {
  private readonly versions = new Map<string, VersionWindow | null>();

  constructor(private readonly window: number) {}

  /** Counts one decided payment (a version whose manifest has no `drift` block is ignored). */
  observe(manifest: ModelManifest, row: Float32Array, score: number | null): void {
    if (score === null) return;
    let w = this.versions.get(manifest.version);
    if (w === undefined) {
      w = this.windowFor(manifest);
      if (this.versions.size >= MAX_VERSIONS) this.versions.delete(this.versions.keys().next().value as string);
      this.versions.set(manifest.version, w);
    }
    w?.add(row, score);
  }

  private windowFor(manifest: ModelManifest): VersionWindow | null {
    const ref = manifest.drift;
    if (ref === undefined || ref.features.length !== manifest.features.length) return null;
    return new VersionWindow([...ref.features.map((f) => f.name), 'score'], [...ref.features, ref.score], this.window);
  }

  /** PSI of each feature and of the score, per version with enough payments in its window. */
  readings(): PsiReading[] {
    return [...this.versions].flatMap(([v, w]) => w?.readings(v) ?? []);
  }
}
