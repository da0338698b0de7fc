/** The slice of autocannon's programmatic API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  interface Histogram {
    readonly average: number;
    readonly mean: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  }
  interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    onResponse?: (status: number, body: string, context?: unknown, headers?: Record<string, string>) => void;
    /** Called before each request; returns the request to send. */
    setupRequest?: (req: RequestSpec) => RequestSpec;
  }
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    timeout?: number;
    overallRate?: number;
    idReplacement?: boolean;
    requests?: RequestSpec[];
  }
  interface Result {
    readonly latency: Histogram;
    readonly requests: Histogram;
    readonly duration: number;
    readonly errors: number;
    readonly timeouts: number;
    readonly non2xx: number;
    readonly '2xx': number;
  }
  function autocannon(opts: Options): Promise<Result>;
  export = autocannon;
}
