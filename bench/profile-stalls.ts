/**
 * Delay attribution from a CPU profile (`npm run bench:tail`): the profile's samples, in time order, rebuild
 * the thread's timeline. A run of consecutive samples that are not `(idle)` is one stretch during which the
 * event loop could not serve anything else; stretches longer than a threshold (5 ms) are the stalls. Each is
 * named by where its time went (self time per function and per component: a package under node_modules, a
 * folder of lib/, the local host, Node internals, GC) and by the callback that started it (the outermost
 * JavaScript frame of its first sample). The sampling heap profile is summarized the same way (bytes
 * allocated per function and component).
 */

/** The parts of a `.cpuprofile` this reads. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
    readonly children?: readonly number[];
  }[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The parts of a sampling heap profile this reads. */
export interface HeapProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly HeapProfileNode[];
}

/** One stall: a stretch of the thread busy for longer than the threshold. */
export interface Stall {
  /** Start, ms on the profile's clock (µs / 1000). */
  readonly at_ms: number;
  readonly ms: number;
  /**
   * Time between samples longer than {@link GAP_MS} inside the stall, ms: the thread (or the profiler's) was
   * not running, e.g. preempted on a shared machine. A stall that is mostly unsampled is the machine's, not
   * the code's.
   */
  readonly unsampled_ms: number;
  /** The outermost JavaScript frame of its first sample (what the event loop called). */
  readonly entry: string;
  /** Self time per component, ms, largest first (top 5). */
  readonly by_component: readonly [string, number][];
  /** Self time per function, ms, largest first (top 5). */
  readonly top: readonly [string, number][];
}

const r2 = (v: number): number => Math.round(v * 100) / 100;

/** A gap between two samples longer than this (ms) counts as unsampled time (the sampling interval is 0.25 ms). */
export const GAP_MS = 2;
/** Where the time of such gaps is put, in place of the function sampled before them. */
export const UNSAMPLED = '(unsampled)';

/** The component a frame belongs to: a package, a folder of the app, a Node internal, or a V8 pseudo-frame. */
export function component(url: string, fn: string): string {
  if (url === '') {
    if (fn === '(garbage collector)') return 'gc';
    if (fn === '(program)' || fn === '(root)' || fn === '(idle)') return fn.slice(1, -1);
    return 'v8 builtin';
  }
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nm !== null) return nm[1] as string;
  const app = /\/dist\/(lib\/[^/]+|local|functions|bench)\//.exec(url);
  if (app !== null) return app[1] as string;
  const internal = /^node:(?:internal\/)?([^/]+)/.exec(url);
  if (internal !== null) return `node:${internal[1]}`;
  return url.replace(/^.*\//, '');
}

function frameName(f: CpuProfile['nodes'][number]['callFrame']): string {
  const file = f.url.replace(/^.*\/(dist|node_modules)\//, '').replace(/^file:\/\//, '');
  return `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
}

function topOf(m: Map<string, number>, n: number): [string, number][] {
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => [k, r2(v)]);
}

/** Everything {@link analyzeProfile} reports. */
export interface ProfileSummary {
  readonly duration_ms: number;
  /** Share of the profile's time the thread was not idle. */
  readonly busy_share: number;
  /** Self time per component over the whole profile, ms (top 15). */
  readonly self_by_component: readonly [string, number][];
  /** Self time per function over the whole profile, ms (top 20). */
  readonly self_top: readonly [string, number][];
  readonly threshold_ms: number;
  readonly stalls: {
    readonly count: number;
    readonly total_ms: number;
    /** Of `total_ms`, time between samples longer than {@link GAP_MS} (preemption; see {@link Stall.unsampled_ms}). */
    readonly unsampled_ms: number;
    readonly max_ms: number;
    /** Time in stalls per component, ms (top 12). */
    readonly by_component: readonly [string, number][];
    /** Time in stalls per function, ms (top 15). */
    readonly top: readonly [string, number][];
    /** Stalls per entry callback. */
    readonly by_entry: readonly [string, number][];
    /** The longest stalls (top 10). */
    readonly longest: readonly Stall[];
  };
}

/** Rebuilds the timeline of `p` and attributes its stalls longer than `thresholdMs`. */
export function analyzeProfile(p: CpuProfile, thresholdMs = 5): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const rootId = p.nodes.find((n) => !parent.has(n.id))?.id;
  /** The outermost JS frame of a sample's stack (the child of the root, skipping V8 pseudo-frames). */
  const entryOf = (id: number): string => {
    let at = id;
    let outer = id;
    while (parent.has(at) && parent.get(at) !== rootId) {
      at = parent.get(at) as number;
      const f = byId.get(at)?.callFrame;
      if (f !== undefined && f.url !== '') outer = at;
    }
    const f = byId.get(outer)?.callFrame;
    return f === undefined ? '?' : frameName(f);
  };
  // sample i covers [t_i, t_{i+1}); its node's self time is that interval
  const t: number[] = [];
  let acc = p.startTime;
  for (const d of p.timeDeltas) t.push((acc += d));
  const selfComp = new Map<string, number>();
  const selfFn = new Map<string, number>();
  const stallComp = new Map<string, number>();
  const stallFn = new Map<string, number>();
  const entries = new Map<string, number>();
  const stalls: Stall[] = [];
  let busy = 0;
  let runStart = -1;
  let runGap = 0;
  let runComp = new Map<string, number>();
  let runFn = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, v: number): void => void m.set(k, (m.get(k) ?? 0) + v);
  const close = (end: number): void => {
    if (runStart < 0) return;
    const ms = (t[end] as number) / 1000 - (t[runStart] as number) / 1000;
    if (ms > thresholdMs) {
      const entry = entryOf(p.samples[runStart] as number);
      stalls.push({
        at_ms: r2((t[runStart] as number) / 1000),
        ms: r2(ms),
        unsampled_ms: r2(runGap),
        entry,
        by_component: topOf(runComp, 5),
        top: topOf(runFn, 5),
      });
      add(entries, entry, 1);
      for (const [k, v] of runComp) add(stallComp, k, v);
      for (const [k, v] of runFn) add(stallFn, k, v);
    }
    runStart = -1;
    runGap = 0;
    runComp = new Map();
    runFn = new Map();
  };
  for (let i = 0; i + 1 < p.samples.length; i++) {
    const node = byId.get(p.samples[i] as number);
    const dt = ((t[i + 1] as number) - (t[i] as number)) / 1000;
    const f = node?.callFrame ?? { functionName: '?', url: '', lineNumber: 0 };
    if (f.functionName === '(idle)') {
      close(i);
      continue;
    }
    busy += dt;
    // a sample stands for at most GAP_MS; the rest of a longer gap is time nobody sampled (preemption)
    const own = Math.min(dt, GAP_MS);
    const comp = component(f.url, f.functionName);
    const name = f.url === '' ? f.functionName : frameName(f);
    add(selfComp, comp, own);
    add(selfFn, name, own);
    if (runStart < 0) runStart = i;
    add(runComp, comp, own);
    add(runFn, name, own);
    if (dt > GAP_MS) {
      runGap += dt - GAP_MS;
      for (const m of [selfComp, selfFn, runComp, runFn]) add(m, UNSAMPLED, dt - GAP_MS);
    }
  }
  close(p.samples.length - 1);
  const duration = (p.endTime - p.startTime) / 1000;
  stalls.sort((a, b) => b.ms - a.ms);
  return {
    duration_ms: r2(duration),
    busy_share: r2(busy / Math.max(1e-9, duration)),
    self_by_component: topOf(selfComp, 15),
    self_top: topOf(selfFn, 20),
    threshold_ms: thresholdMs,
    stalls: {
      count: stalls.length,
      total_ms: r2(stalls.reduce((s, x) => s + x.ms, 0)),
      unsampled_ms: r2(stalls.reduce((s, x) => s + x.unsampled_ms, 0)),
      max_ms: stalls[0]?.ms ?? 0,
      by_component: topOf(stallComp, 12),
      top: topOf(stallFn, 15),
      by_entry: [...entries.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10),
      longest: stalls.slice(0, 10),
    },
  };
}

/** Bytes allocated (sampled) per component and per function, MB, largest first. */
export function analyzeHeap(head: HeapProfileNode): {
  by_component: [string, number][];
  top: [string, number][];
} {
  const comp = new Map<string, number>();
  const fn = new Map<string, number>();
  const walk = (n: HeapProfileNode): void => {
    if (n.selfSize > 0) {
      const mb = n.selfSize / 1e6;
      comp.set(
        component(n.callFrame.url, n.callFrame.functionName),
        (comp.get(component(n.callFrame.url, n.callFrame.functionName)) ?? 0) + mb,
      );
      const name = frameName(n.callFrame);
      fn.set(name, (fn.get(name) ?? 0) + mb);
    }
    for (const c of n.children ?? []) walk(c);
  };
  walk(head);
  return { by_component: topOf(comp, 15), top: topOf(fn, 20) };
}
