/**
 * An open-loop, constant-rate load generator for the fixed-rate runs (`service_at_40pct`, `at_80pct`).
 *
 * Why not autocannon's `overallRate`: autocannon splits the rate over its connections and lets each one
 * send back to back until it has made its quota for the current second, then pause until the next
 * 1-second tick (`lib/httpClient.js`, `reqsMadeThisSecond`). Every second therefore starts with a burst of
 * all connections at once, a closed loop until the quota is spent, and the "fixed rate" tail is the
 * tail of that burst. It also records each answer with `recordValueWithExpectedInterval(latency, 1 ms)`,
 * which adds one synthetic sample per millisecond of every slow answer, so a 50 ms answer counts 50 times.
 *
 * Here, request `i` is due at `start + i / rate` and is sent then, whatever earlier answers are doing
 * (a keep-alive pool of up to `maxSockets` sockets); its latency runs from when it was due, so a late
 * send counts against the server-side system that made it late (no coordinated omission).
 */
import * as http from 'node:http';
import { percentile } from './percentile';

/** Figures of one open-loop run (ms; `rps` counts 2xx answers per second of the run). */
export interface OpenLoopFigures {
  readonly offered: number;
  readonly rps: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  readonly non2xx: number;
  readonly errors: number;
}

/** Options of {@link openLoop}. */
export interface OpenLoopOptions {
  readonly url: string;
  readonly path: string;
  readonly body: () => string;
  /** Offered rate, req/s. */
  readonly rate: number;
  readonly durationSec: number;
  /** Most sockets open at once; default 256. A request due while all are busy waits (and that counts). */
  readonly maxSockets?: number;
  /** Per-request timeout, ms; default 30 000. */
  readonly timeoutMs?: number;
  /** Called with each 2xx answer's latency (ms, from its due time) and body; default: bodies are discarded. */
  readonly onAnswer?: (latencyMs: number, body: string) => void;
}

/** {@link percentile}, ms to 2 decimals. */
function pct(sorted: readonly number[], p: number): number {
  return Math.round(percentile(sorted, p) * 100) / 100;
}

/** Sends `rate` requests per second for `durationSec`, each when due; resolves when every answer is in. */
export async function openLoop(o: OpenLoopOptions): Promise<OpenLoopFigures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.maxSockets ?? 256 });
  const target = new URL(o.path, o.url);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const pending = new Set<Promise<void>>();
  const send = (due: number): void => {
    const body = o.body();
    const p = new Promise<void>((resolve) => {
      const req = http.request(
        target,
        {
          method: 'POST',
          agent,
          timeout: o.timeoutMs ?? 30_000,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          if (o.onAnswer === undefined) res.resume();
          else res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              const ms = performance.now() - due;
              latencies.push(ms);
              o.onAnswer?.(ms, Buffer.concat(chunks).toString('utf8'));
            } else non2xx++;
            resolve();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });
    pending.add(p);
    void p.then(() => pending.delete(p));
  };
  const interval = 1000 / o.rate;
  const total = Math.round(o.rate * o.durationSec);
  const start = performance.now();
  let next = 0;
  await new Promise<void>((done) => {
    const tick = (): void => {
      const now = performance.now();
      while (next < total && start + next * interval <= now) send(start + next++ * interval);
      if (next >= total) return done();
      setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
    };
    tick();
  });
  await Promise.all(pending);
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    offered: o.rate,
    rps: Math.round(latencies.length / Math.max(o.durationSec, elapsed)),
    p50_ms: pct(latencies, 50),
    p99_ms: pct(latencies, 99),
    max_ms: pct(latencies, 100),
    non2xx,
    errors,
  };
}
