/**
 * `LocalHost`: serves the app's own registered Azure Functions (v4 programming model) over HTTP
 * like `func start`, driving the real `@azure/functions` library through its
 * `@azure/functions-core` seam (see {@link installCoreShim}).
 *
 * @example
 * ```ts
 * const host = await LocalHost.create({ port: 7071, appModules: [require.resolve('../functions/index')] });
 * // GET `${host.url}/api/...`; host.invoke('scoreQueue', body, { MessageId: 'm1', DeliveryCount: 1 })
 * await host.dispose();
 * ```
 * @module
 */
import type { InProcessBus } from './in-process-bus';
import { type CoreLogEntry, type CoreRegistry, type RegisteredFunction, installCoreShim } from './core-shim';
import type { RpcBindingInfo, RpcInvocationRequest, RpcInvocationResponse, RpcLogLevel } from './core-types';
import { DEFAULT_FUNCTION_TIMEOUT_MS, FunctionTimeoutError, withFunctionTimeout } from './function-timeout';
import { HttpFront } from './http-front';
import type { ExtraRoutes } from './http-server';
import type { HttpThrottleOptions } from './http-throttle';
import { isHttpTrigger, loadApp } from './app-loader';
import { type InvokeOptions, type InvokeResult, invoke, invokeRpc, runAppHooks } from './invoke';
import { WorkerPool, workerProcessCount } from './worker-processes';

export type { ExtraRoutes } from './http-server';
export type { HttpThrottleOptions } from './http-throttle';
export type { InvokeOptions, InvokeResult } from './invoke';
export type { DecodedHttpResponse } from './rpc';
export type { RegisteredFunction } from './core-shim';

/** Options for {@link LocalHost.create}. */
export interface LocalHostOptions {
  /** Port to listen on; 0 = a free port. Default 7071. */
  port?: number;
  /** Interface to bind. Default `127.0.0.1` (loopback only: function keys are not enforced). */
  host?: string;
  /** Route prefix (host.json `extensions.http.routePrefix`). Default `api`; `''` for none. */
  routePrefix?: string;
  /** Absolute paths of compiled function modules, required after the shim is installed. */
  appModules: string[];
  /** Log line sink. Default: `console.log`. */
  log?: (line: string) => void;
  /** Also print `debug`/`trace` logs (library system logs). Default false. */
  verbose?: boolean;
  /**
   * Print `Executing …` / `Executed …` for every invocation, as `func start` does. Default false: in Azure
   * those lines come from the Functions host (another process); here they would cost the event loop on
   * every request. `npm start -- --verbose` (or `LOCAL_HOST_VERBOSE=1`) turns them on.
   */
  invocationLog?: boolean;
  /** Handler for non-function routes (e.g. `/local/queues/...`), consulted before routing. */
  extraRoutes?: ExtraRoutes;
  /** Request body cap in bytes (413 beyond). Default 8 MiB. */
  maxBodyBytes?: number;
  /**
   * host.json `extensions.http` throttles (`maxConcurrentRequests`, `maxOutstandingRequests`), applied by the
   * HTTP front with the Functions host's semantics (`./http-throttle`). Default: unbounded.
   */
  throttles?: HttpThrottleOptions;
  /**
   * host.json `functionTimeout`, ms (`Infinity` = none), enforced as the host does (`./function-timeout`):
   * HTTP 500 and the slot back; other triggers reject with `FunctionTimeoutError`. Default 30 min.
   */
  functionTimeoutMs?: number;
  /** Directory reported to appStart hooks as `functionAppDirectory`. Default `process.cwd()`. */
  functionAppDirectory?: string;
  /**
   * Worker processes (`FUNCTIONS_WORKER_PROCESS_COUNT`, 1–10): this process and N − 1 forked ones, each with its own
   * module state, HTTP invocations in turn. Default: the setting, else 1.
   */
  workerProcesses?: number;
  /** The embedded bus, which receives what forked worker processes send to theirs (./forwarding-bus). */
  bus?: InProcessBus;
  /** How long `dispose()` waits for in-flight work before force-closing. Default 10 s. */
  shutdownTimeoutMs?: number;
}

/** Summary of a registered function. */
export interface FunctionInfo {
  name: string;
  /** Trigger binding type, e.g. `httpTrigger`, `serviceBusTrigger`, `blobTrigger`. */
  triggerType: string;
  /** Generated trigger binding name (the `inputData` name the host would use). */
  triggerName: string;
  trigger: RpcBindingInfo;
  /** For http triggers: route template (function name if none) and methods (empty = any). */
  route?: string;
  methods?: string[];
  /** Metadata exactly as registered by `@azure/functions`. */
  metadata: RegisteredFunction['metadata'];
}

const LEVEL_ORDER: Record<RpcLogLevel, number> = {
  trace: 0,
  debug: 1,
  information: 2,
  warning: 3,
  error: 4,
  critical: 5,
  none: 6,
};

/** A running local Functions host. */
export class LocalHost {
  /** The process-wide core registry (functions, hooks, programming model). */
  readonly registry: CoreRegistry;
  readonly routePrefix: string;
  readonly #server: HttpFront;
  readonly #workers: WorkerPool;
  readonly #opts: LocalHostOptions;
  readonly #log: (level: RpcLogLevel, message: string) => void;
  readonly #previousSink: (entry: CoreLogEntry) => void;
  #pending = new Set<Promise<unknown>>();
  #disposing: Promise<void> | undefined;

  private constructor(
    registry: CoreRegistry,
    server: HttpFront,
    workers: WorkerPool,
    opts: LocalHostOptions,
    log: (level: RpcLogLevel, message: string) => void,
    previousSink: (entry: CoreLogEntry) => void,
  ) {
    this.registry = registry;
    this.routePrefix = opts.routePrefix ?? 'api';
    this.#server = server;
    this.#workers = workers;
    this.#opts = opts;
    this.#log = log;
    this.#previousSink = previousSink;
  }

  /**
   * Installs the core shim, loads the app modules (which register functions/hooks through the
   * real `@azure/functions`), locks setup like the worker (`getCapabilities`), awaits
   * `appStart` hooks, then starts serving.
   */
  static async create(opts: LocalHostOptions): Promise<LocalHost> {
    const registry = installCoreShim();
    const sink = opts.log ?? ((line: string) => console.log(line));
    const minLevel = opts.verbose ? 0 : LEVEL_ORDER.information;
    const log = (level: RpcLogLevel, message: string, fnName?: string): void => {
      if (LEVEL_ORDER[level] < minLevel) return;
      sink(`[${new Date().toISOString()}] [${level}]${fnName ? ` ${fnName}:` : ''} ${message}`);
    };
    const previousSink = registry.logSink;
    registry.logSink = (e) => log(e.level, e.message, e.functionName);
    try {
      const functionAppDirectory = opts.functionAppDirectory ?? process.cwd();
      const settings = {
        appModules: opts.appModules,
        functionAppDirectory,
        invocationLog: opts.invocationLog === true,
      };
      const loaded = await loadApp(registry, settings, log);
      const count = opts.workerProcesses ?? workerProcessCount(process.env['FUNCTIONS_WORKER_PROCESS_COUNT']);
      let workers: WorkerPool | undefined;
      try {
        // FUNCTIONS_WORKER_PROCESS_COUNT: this process is worker 1; the others are forked and served in turn
        workers = await WorkerPool.start(
          count,
          loaded.invokeHttp,
          { t: 'init', ...settings, verbose: opts.verbose === true },
          log,
          undefined,
          opts.bus === undefined ? undefined : (m) => opts.bus?.sendMany(m.name, m.msgs, m.detectDuplicates),
        );
        if (count > 1)
          log('information', `Worker processes: ${count} (FUNCTIONS_WORKER_PROCESS_COUNT), invocations in turn`);
      } catch (err) {
        await runAppHooks(registry, 'appTerminate', functionAppDirectory).catch(() => undefined);
        throw err;
      }
      const pool = workers;
      // HTTP runs on its own thread, as the Functions host is its own process: the app thread only runs
      // the invocations the front sends it.
      const server = await HttpFront.start(
        {
          host: opts.host ?? '127.0.0.1',
          port: opts.port ?? 7071,
          routePrefix: opts.routePrefix ?? 'api',
          routes: loaded.routes,
          maxBodyBytes: opts.maxBodyBytes ?? 8 * 1024 * 1024,
          throttles: opts.throttles ?? {},
          functionTimeoutMs: opts.functionTimeoutMs ?? DEFAULT_FUNCTION_TIMEOUT_MS,
        },
        {
          ...(opts.extraRoutes === undefined ? {} : { extraRoutes: opts.extraRoutes }),
          log: (level, message) => log(level, message),
          invoke: (name, http) => pool.invoke(name, http),
        },
      ).catch(async (err: unknown) => {
        // appStart already ran (resources may be open): give appTerminate hooks a chance.
        await pool.stop(5_000);
        await runAppHooks(registry, 'appTerminate', functionAppDirectory).catch(() => undefined);
        throw err;
      });
      const host = new LocalHost(registry, server, pool, opts, log, previousSink);
      host.#printFunctions();
      return host;
    } catch (err) {
      registry.logSink = previousSink;
      throw err;
    }
  }

  /** Origin the host listens on, e.g. `http://127.0.0.1:7071` (function routes are under `/api`). */
  get url(): string {
    return this.#server.url;
  }

  /** Bound port. */
  get port(): number {
    return this.#server.port;
  }

  /** All registered functions, in registration order. */
  get functions(): FunctionInfo[] {
    return [...this.registry.functions.values()].map((fn) => {
      const info: FunctionInfo = {
        name: fn.name,
        triggerType: fn.trigger.type ?? '',
        triggerName: fn.triggerName,
        trigger: fn.trigger,
        metadata: fn.metadata,
      };
      if (isHttpTrigger(fn.trigger)) {
        info.route = typeof fn.trigger['route'] === 'string' ? fn.trigger['route'] : fn.name;
        info.methods = Array.isArray(fn.trigger['methods']) ? (fn.trigger['methods'] as string[]) : [];
      }
      return info;
    });
  }

  /** Looks up a registered function; throws if unknown. */
  getFunction(name: string): RegisteredFunction {
    const fn = this.registry.getFunction(name);
    if (!fn) throw new Error(`Unknown function "${name}"`);
    return fn;
  }

  /**
   * Invokes a function (any trigger type) with a plain trigger value and host-style
   * (PascalCase) trigger metadata; see {@link invoke} in `./invoke`.
   * Rejects with the handler's error if it throws, and with `FunctionTimeoutError` past `functionTimeoutMs`.
   */
  invoke(
    name: string,
    triggerValue: unknown,
    triggerMetadata?: Record<string, unknown>,
    options?: InvokeOptions,
  ): Promise<InvokeResult> {
    return this.#track(name, () =>
      invoke(this.registry, this.getFunction(name), triggerValue, triggerMetadata, {
        invocationLog: this.#opts.invocationLog,
        ...options,
      }),
    );
  }

  /** Invokes a function with a raw RPC invocation request; returns the raw RPC response (timeout as `invoke`). */
  invokeRpc(name: string, request: RpcInvocationRequest): Promise<RpcInvocationResponse> {
    return this.#track(name, () =>
      invokeRpc(this.registry, this.getFunction(name), { ...request }, { invocationLog: this.#opts.invocationLog }),
    );
  }

  /**
   * Graceful shutdown (idempotent): stop accepting HTTP, wait for in-flight requests and
   * invocations, run `appTerminate` hooks, close the port.
   */
  dispose(): Promise<void> {
    this.#disposing ??= (async () => {
      const timeout = this.#opts.shutdownTimeoutMs ?? 10_000;
      const closing = this.#server.close(timeout);
      await Promise.race([Promise.allSettled([...this.#pending]), new Promise((r) => setTimeout(r, timeout).unref())]);
      await closing;
      await this.#workers.stop(timeout);
      try {
        await runAppHooks(this.registry, 'appTerminate', this.#opts.functionAppDirectory ?? process.cwd());
      } finally {
        this.registry.logSink = this.#previousSink;
      }
    })();
    return this.#disposing;
  }

  /** Runs an invocation under `functionTimeout`, tracked until it settles or times out (for `dispose`). */
  #track<T>(name: string, run: () => Promise<T>): Promise<T> {
    if (this.#disposing) return Promise.reject(new Error('LocalHost is disposed'));
    const timeoutMs = this.#opts.functionTimeoutMs ?? DEFAULT_FUNCTION_TIMEOUT_MS;
    const p = withFunctionTimeout((async () => run())(), name, timeoutMs); // sync throws become rejections
    p.catch((err: unknown) => {
      if (err instanceof FunctionTimeoutError) this.#log('error', `${err.message}.`);
    });
    this.#pending.add(p);
    const done = (): void => void this.#pending.delete(p);
    p.then(done, done);
    return p;
  }

  #printFunctions(): void {
    const lines = this.functions.map((f) =>
      f.route !== undefined
        ? `  ${f.name}: [${f.methods?.join(',') || 'ANY'}] ${this.url}/${[this.routePrefix, f.route]
            .map((s) => s.replace(/^\/+|\/+$/g, ''))
            .filter(Boolean)
            .join('/')}`
        : `  ${f.name}: ${f.triggerType}`,
    );
    this.#log('information', `Functions:\n${lines.join('\n')}`);
  }
}
