/**
 * Returns a retired model version's memory promptly. Each swap leaves tens of MB of model bytes in
 * main-thread ArrayBuffers (the upload or download, the worker pool's shared copy) that V8 frees only at
 * a full GC, which a small, busy heap seldom runs: bench:swap measured the RSS of 50 heavy-model swaps
 * growing by about 13 MiB per swap without it, and flat with it. A full GC of this heap takes about 6 ms,
 * once per swap, after the old version's last lease ended (the native sessions go with their worker threads).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Timers } from '../platform/timers';

let cached: (() => void) | null | undefined;

/**
 * A function running a full garbage collection: `globalThis.gc` when the process runs with `--expose-gc`,
 * else obtained once at run time (`--expose-gc` set through `v8.setFlagsFromString`, as test runners do).
 * Undefined if neither works.
 */
export function fullGc(): (() => void) | undefined {
  if (cached !== undefined) return cached ?? undefined;
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return (cached = exposed as () => void);
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    cached = typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    cached = null;
  }
  return cached ?? undefined;
}

/** Runs one full GC a little after the last of a burst of releases (debounced). */
export class MemoryReclaimer {
  private timer: unknown;
  private disposed = false;
  /** Full GCs run so far. */
  runs = 0;

  /**
   * @param timers the reconcile loop's timers.
   * @param delayMs wait after the last release, ms (default 1000: the retired worker threads have ended).
   * @param gc the collector, e.g. {@link fullGc}`()`; undefined disables reclaiming.
   */
  constructor(
    private readonly timers: Timers,
    private readonly delayMs: number,
    private readonly gc: (() => void) | undefined,
  ) {}

  /** Schedules a full GC (again) `delayMs` from now. */
  schedule(): void {
    if (this.disposed || this.gc === undefined) return;
    this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => {
      this.runs++;
      this.gc?.();
    }, this.delayMs);
  }

  dispose(): void {
    this.disposed = true;
    this.timers.clearTimeout(this.timer);
  }
}
