/**
 * Loads the function app as the Node worker does: requires the compiled modules after the core shim is installed
 * (they register functions and hooks through the real `@azure/functions`), locks setup (`getCapabilities`), runs
 * the `appStart` hooks, and answers HTTP invocations (`invokeRpc` → the http output binding). The host's own process
 * and every forked worker process (`./worker-process`) load the app this way.
 * @module
 */
import * as path from 'node:path';
import type { CoreRegistry, RegisteredFunction } from './core-shim';
import type { RpcBindingInfo, RpcHttpData, RpcInvocationResponse, RpcLogLevel } from './core-types';
import { invokeRpc, runAppHooks } from './invoke';
import { RouteTable } from './routes';
import { type DecodedHttpResponse, decodeHttpResponse } from './rpc';
import { invocationTraceContext } from './trace-context';

/** What loading needs. */
export interface AppSettings {
  /** Absolute paths of compiled function modules. */
  readonly appModules: readonly string[];
  /** Reported to appStart hooks as `functionAppDirectory`. */
  readonly functionAppDirectory: string;
  /** `Executing …` / `Executed …` lines per invocation. */
  readonly invocationLog: boolean;
}

/** A loaded app. */
export interface LoadedApp {
  /** The HTTP routes the front serves (templates it could not serve are logged and left out). */
  readonly routes: { name: string; route: string; methods: string[] }[];
  /** Runs the named HTTP-triggered function; its http response (`undefined` if none). */
  invokeHttp(name: string, http: RpcHttpData): Promise<DecodedHttpResponse | undefined>;
}

/** Whether a trigger binding is an HTTP trigger. */
export function isHttpTrigger(b: RpcBindingInfo): boolean {
  return (b.type ?? '').toLowerCase() === 'httptrigger';
}

/** Loads the app into `registry` (installed by the caller), then runs `appStart`. */
export async function loadApp(
  registry: CoreRegistry,
  s: AppSettings,
  log: (level: RpcLogLevel, message: string) => void,
): Promise<LoadedApp> {
  for (const mod of s.appModules) {
    if (!path.isAbsolute(mod)) throw new Error(`appModules must be absolute paths: "${mod}"`);
    // Loading the app's CommonJS modules is the point here (like the worker's entry-point load).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(mod);
  }
  if (registry.functions.size === 0 && registry.libraryLoadedBeforeShim) {
    throw new Error(
      'No functions were registered and "@azure/functions" was loaded before the core shim: ' +
        'create the LocalHost before anything imports the function modules.',
    );
  }
  const caps = (await registry.programmingModel?.getCapabilities?.({})) ?? {};
  if (caps['HttpUri']) throw new Error('app.setup({ enableHttpStream: true }) is not supported by LocalHost.');
  registry.lockFunctions();

  const routes: { name: string; route: string; methods: string[] }[] = [];
  const check = new RouteTable<string>(); // templates the front could not serve are reported here
  for (const fn of registry.functions.values()) {
    if (!isHttpTrigger(fn.trigger)) continue;
    const route = typeof fn.trigger['route'] === 'string' ? fn.trigger['route'] : fn.name;
    const methods = Array.isArray(fn.trigger['methods']) ? (fn.trigger['methods'] as string[]) : [];
    try {
      check.add(route, methods, fn.name);
      routes.push({ name: fn.name, route, methods });
    } catch (err) {
      log('error', `Function '${fn.name}' not served: ${(err as Error).message}`);
    }
  }
  const invokeOptions = { invocationLog: s.invocationLog };
  await runAppHooks(registry, 'appStart', s.functionAppDirectory);
  return {
    routes,
    invokeHttp: async (name, http) => {
      const fn = registry.getFunction(name);
      if (fn === undefined) throw new Error(`Unknown function "${name}"`);
      const res = await invokeRpc(
        registry,
        fn,
        // no trigger metadata: `@azure/functions` ignores it for http triggers unless http streaming is
        // on (which this host refuses), so building it (two JSON.stringify per request) was wasted work
        {
          inputData: [{ name: fn.triggerName, data: { http } }],
          triggerMetadata: {},
          traceContext: invocationTraceContext(http.headers?.['traceparent'], http.headers?.['tracestate']),
        },
        invokeOptions,
      );
      return httpResponse(fn, res);
    },
  };
}

/** Name of each function's http output binding (`$return` when none is named), looked up once. */
const httpOutput = new WeakMap<RegisteredFunction, string>();

/** Picks the http output (return value or a named `http` output binding) from a response. */
function httpResponse(fn: RegisteredFunction, res: RpcInvocationResponse): DecodedHttpResponse | undefined {
  let name = httpOutput.get(fn);
  if (name === undefined) {
    [name] = Object.entries(fn.metadata.bindings).find(
      ([, b]) => b.direction === 'out' && (b.type ?? '').toLowerCase() === 'http',
    ) ?? ['$return'];
    httpOutput.set(fn, name);
  }
  const data = name === '$return' ? res.returnValue : res.outputData?.find((o) => o.name === name)?.data;
  return data?.http ? decodeHttpResponse(data.http) : undefined;
}
