/**
 * An open-loop load generator for `npm run bench:swap`: requests are sent at a fixed rate whatever the
 * answers, and each latency is measured from the request's scheduled time (no coordinated omission).
 * Every sample keeps its start time, so latencies can be split into swap windows and steady periods.
 */
import * as http from 'node:http';

/** One request: scheduled start (ms, `performance.now` of this process), latency (ms), status (0 = no answer), `x-model-version`, the failure's problem `code` (`client:…` when no answer came). */
export interface Sample {
  readonly start: number;
  readonly ms: number;
  readonly status: number;
  readonly version: string | undefined;
  readonly code?: string;
}

/** Sends POSTs at `rate` req/s until stopped. */
export class OpenLoop {
  // fifo: every kept-alive socket is reused often, so none idles into the server's 5 s keep-alive timeout
  // (a request racing that close fails with ECONNRESET on the client, not in the server)
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64, scheduling: 'fifo' });
  private readonly samples: Sample[] = [];
  private readonly inflight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private sent = 0;
  private t0 = 0;

  /**
   * @param headers extra request headers (e.g. `x-deadline-ms`).
   */
  constructor(
    private readonly url: URL,
    private readonly rate: number,
    private readonly body: () => string,
    private readonly headers: Record<string, string> = {},
    private readonly timeoutMs = 10_000,
  ) {}

  /** Starts sending. */
  start(): void {
    this.t0 = performance.now();
    this.timer = setInterval(() => this.tick(), 2);
  }

  private tick(): void {
    const due = Math.floor(((performance.now() - this.t0) * this.rate) / 1000);
    while (this.sent < due) {
      const scheduled = this.t0 + (this.sent * 1000) / this.rate;
      this.sent++;
      const p = this.one(scheduled);
      this.inflight.add(p);
      void p.finally(() => this.inflight.delete(p));
    }
  }

  private one(scheduled: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const data = this.body();
      const req = http.request(
        this.url,
        {
          method: 'POST',
          agent: this.agent,
          headers: { ...this.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
          timeout: this.timeoutMs,
        },
        (res) => {
          let text = '';
          if (res.statusCode === 200) res.resume();
          else res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => {
            const v = res.headers['x-model-version'];
            const code = /"code":"([a-z_]+)"/.exec(text)?.[1];
            this.samples.push({
              start: scheduled,
              ms: performance.now() - scheduled,
              status: res.statusCode ?? 0,
              version: typeof v === 'string' ? v : undefined,
              ...(code === undefined ? {} : { code }),
            });
            resolve();
          });
        },
      );
      const fail = (err: NodeJS.ErrnoException): void => {
        this.samples.push({
          start: scheduled,
          ms: performance.now() - scheduled,
          status: 0,
          version: undefined,
          code: `client:${err.code ?? err.message}`,
        });
        resolve();
      };
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', fail);
      req.end(data);
    });
  }

  /** Stops sending, waits for answers in flight, returns every sample. */
  async stop(): Promise<Sample[]> {
    clearInterval(this.timer);
    await Promise.all([...this.inflight]);
    this.agent.destroy();
    return this.samples;
  }
}

/** The p-th percentile (0–100) of values, nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}
