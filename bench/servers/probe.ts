/**
 * The tail probe of the benchmark's server processes (`npm run bench:tail`), behind `/__bench/probe/…`:
 *
 * - `start?file=PATH`: starts a CPU profile of this thread (the inspector's sampling profiler, 250 µs), a
 *   sampling heap profile (where the allocations come from), GC entries (`PerformanceObserver` 'gc': start,
 *   duration, kind, heap used after), a fresh event-loop delay histogram (1 ms resolution) and, when HTTP
 *   requests reach this thread, each request's time from the `request` event to the response's `finish`.
 * - `stop`: stops all of it, writes the CPU profile to PATH (`.cpuprofile` JSON) and the heap profile beside it
 *   (`PATH.heap.json`), and answers the GC entries, the loop-delay percentiles and the request times.
 *
 * The inspector's profiler samples from its own thread; turning it on costs the sampled thread little, and the
 * same probe runs in every variant of a comparison.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as inspector from 'node:inspector';
import {
  constants,
  monitorEventLoopDelay,
  PerformanceObserver,
  performance,
  type EventLoopUtilization,
  type IntervalHistogram,
} from 'node:perf_hooks';

/** A GC pause seen during the probe (ms on this process's `performance.now()` clock). */
export interface GcEntry {
  readonly at_ms: number;
  readonly ms: number;
  readonly kind: string;
  readonly heap_used_mb: number;
}

/** What `stop` answers. */
export interface ProbeResult {
  /**
   * The monotonic clock the CPU profile's timestamps use (µs) minus `performance.now()`, ms: a profile time
   * `t` µs is `t / 1000 - clock_offset_ms` on the GC entries' clock.
   */
  readonly clock_offset_ms: number;
  readonly gc: readonly GcEntry[];
  readonly loop_delay: { readonly p50_ms: number; readonly p99_ms: number; readonly max_ms: number };
  /** Server time of each HTTP request seen on this thread (request event → response finish), ms. */
  readonly request_ms: readonly number[];
  /**
   * CPU time of the whole process (every thread: main, inference workers, ONNX Runtime's) during the probe, ms,
   * user + system. Unlike wall-clock figures, it barely moves when other processes share the cores.
   */
  readonly cpu_ms: number;
  /** The main thread's event-loop utilization during the probe (share of wall time not idle). */
  readonly loop_utilization: number;
}

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

interface Running {
  readonly session: inspector.Session;
  readonly file: string;
  readonly gc: GcEntry[];
  readonly observer: PerformanceObserver;
  readonly delay: IntervalHistogram;
  readonly requestMs: number[];
  readonly restore: () => void;
  readonly cpu: NodeJS.CpuUsage;
  readonly elu: EventLoopUtilization;
}

let running: Running | undefined;

function post<T>(session: inspector.Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (err, res) => (err === null ? resolve(res as T) : reject(err))),
  );
}

/** Times each request handled on this thread by wrapping `http.Server#emit('request')`; returns the undo. */
function timeRequests(into: number[]): () => void {
  const proto = http.Server.prototype as unknown as { emit: (event: string, ...args: unknown[]) => boolean };
  const original = proto.emit;
  proto.emit = function (this: unknown, event: string, ...args: unknown[]): boolean {
    if (event === 'request') {
      const res = args[1] as http.ServerResponse;
      const t0 = performance.now();
      res.once('finish', () => into.push(performance.now() - t0));
    }
    return original.call(this, event, ...args);
  };
  return () => (proto.emit = original);
}

async function start(file: string): Promise<void> {
  if (running !== undefined) throw new Error('probe already running');
  const session = new inspector.Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: 250 });
  await post(session, 'HeapProfiler.enable');
  // every sampled allocation, also those a later GC collected (per-request garbage is what the scavenges clear)
  await post(session, 'HeapProfiler.startSampling', {
    samplingInterval: 64 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const gc: GcEntry[] = [];
  const observer = new PerformanceObserver((list) => {
    const heap = Math.round(process.memoryUsage().heapUsed / 1e5) / 10;
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
      gc.push({
        at_ms: e.startTime,
        ms: Math.round(e.duration * 100) / 100,
        kind: KINDS[kind] ?? String(kind),
        heap_used_mb: heap,
      });
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const requestMs: number[] = [];
  const restore = timeRequests(requestMs);
  await post(session, 'Profiler.start');
  const cpu = process.cpuUsage();
  const elu = performance.eventLoopUtilization();
  running = { session, file, gc, observer, delay, requestMs, restore, cpu, elu };
}

async function stop(): Promise<ProbeResult> {
  const r = running;
  if (r === undefined) throw new Error('probe not running');
  running = undefined;
  const cpu = process.cpuUsage(r.cpu);
  const elu = performance.eventLoopUtilization(r.elu);
  const { profile } = await post<{ profile: { startTime: number } }>(r.session, 'Profiler.stop');
  const heap = await post<{ profile: unknown }>(r.session, 'HeapProfiler.stopSampling');
  r.session.disconnect();
  r.observer.disconnect();
  r.delay.disable();
  r.restore();
  fs.writeFileSync(r.file, JSON.stringify(profile));
  fs.writeFileSync(`${r.file}.heap.json`, JSON.stringify(heap.profile));
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  return {
    clock_offset_ms: Number(process.hrtime.bigint()) / 1e6 - performance.now(),
    gc: r.gc,
    loop_delay: { p50_ms: ms(r.delay.percentile(50)), p99_ms: ms(r.delay.percentile(99)), max_ms: ms(r.delay.max) },
    request_ms: r.requestMs,
    cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    loop_utilization: Math.round(elu.utilization * 1000) / 1000,
  };
}

/** Answers `/__bench/probe/start?file=…` and `/__bench/probe/stop`; returns false for any other URL. */
export function probeRoute(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const url = new URL(req.url ?? '/', 'http://x');
  if (!url.pathname.startsWith('/__bench/probe/')) return false;
  const op = url.pathname.slice('/__bench/probe/'.length);
  const work: Promise<unknown> =
    op === 'start' ? start(url.searchParams.get('file') ?? '') : op === 'stop' ? stop() : Promise.reject(new Error(op));
  work.then(
    (body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body ?? {}));
    },
    (err: unknown) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(err) }));
    },
  );
  return true;
}
