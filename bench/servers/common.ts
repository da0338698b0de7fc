/**
 * Shared by the benchmark's server processes: event-loop lag measured in the server itself
 * (`perf_hooks.monitorEventLoopDelay`), exposed at `GET /__bench/stats[?reset=1]`, and the
 * `LISTENING <port>` line the orchestrator waits for.
 */
import type * as http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { probeRoute } from './probe';

/** Server-side figures of one run. */
export interface ServerStats {
  readonly loop_lag_p99_ms: number;
  readonly loop_lag_max_ms: number;
  readonly rss_mb: number;
}

const lag = monitorEventLoopDelay({ resolution: 2 });
lag.enable();
let peakRss = 0;
const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 250);
rssTimer.unref();

/** Current figures (lag since the last reset, ms; peak RSS since the last reset, MiB). */
export function stats(reset: boolean): ServerStats {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
  const out = {
    loop_lag_p99_ms: Math.round(lag.percentile(99) / 1e4) / 100,
    loop_lag_max_ms: Math.round(lag.max / 1e4) / 100,
    rss_mb: Math.round(peakRss / 1024 / 1024),
  };
  if (reset) {
    lag.reset();
    peakRss = 0;
  }
  return out;
}

/** Answers `/__bench/stats` (and the tail probe's `/__bench/probe/…`, ./probe); returns false for any other URL. */
export function statsRoute(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  if (probeRoute(req, res)) return true;
  if (!(req.url ?? '').startsWith('/__bench/stats')) return false;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(stats((req.url ?? '').includes('reset=1'))));
  return true;
}

/** Tells the orchestrator the server is ready. */
export function announce(port: number): void {
  process.stdout.write(`LISTENING ${port}\n`);
}

/** Reads a request body (bench servers trust their client). */
export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
