/**
 * A local stand-in for `@azure/functions-core`, the built-in module that the Azure Functions
 * Node.js worker injects into `require`. `@azure/functions` looks it up lazily
 * (`tryGetCoreApiLazy`) the first time it registers a function or hook; if it is missing the
 * library silently switches to "test mode" and registers nothing. Installing this shim before the
 * app's code registers anything lets the real library hand us its function metadata, handlers,
 * hooks and its `ProgrammingModel`, exactly as it would in Azure.
 *
 * @module
 */
import Module from 'module';
import type {
  CoreFunctionMetadata,
  FunctionCallback,
  HookCallback,
  HookName,
  ProgrammingModel,
  RpcBindingInfo,
  RpcLogCategory,
  RpcLogLevel,
} from './core-types';

export type * from './core-types';

/** The module id `@azure/functions` requires to reach the runtime. */
export const CORE_MODULE_ID = '@azure/functions-core';

/**
 * Resource handle returned by `registerFunction`/`registerHook`, same contract as the worker's
 * (and VS Code's) `Disposable`.
 */
export class Disposable {
  #callOnDispose: (() => unknown) | undefined;

  /** Combines several disposable-likes into one; async dispose functions are not awaited. */
  static from(...disposableLikes: { dispose: () => unknown }[]): Disposable {
    let items: { dispose: () => unknown }[] | undefined = disposableLikes;
    return new Disposable(() => {
      for (const item of items ?? []) {
        if (item && typeof item.dispose === 'function') item.dispose();
      }
      items = undefined;
    });
  }

  /** @param callOnDispose - run once on the first `dispose()` */
  constructor(callOnDispose: () => unknown) {
    this.#callOnDispose = callOnDispose;
  }

  /** Releases the resource (idempotent). */
  dispose(): unknown {
    const fn = this.#callOnDispose;
    this.#callOnDispose = undefined;
    return fn?.call(this);
  }
}

/** A function registered by the app through `app.http(...)`, `app.serviceBusQueue(...)`, etc. */
export interface RegisteredFunction {
  /** Function name (first argument of `app.xxx(name, ...)`). */
  readonly name: string;
  /** Metadata exactly as handed over by the library (not copied, not normalised). */
  readonly metadata: CoreFunctionMetadata;
  /** The user's handler. */
  readonly callback: FunctionCallback;
  /** The trigger binding's (generated) name, e.g. `httpTrigger1a2b3c4d5e`. */
  readonly triggerName: string;
  /** The trigger binding, e.g. `{ type: 'httpTrigger', direction: 'in', route, methods, authLevel }`. */
  readonly trigger: RpcBindingInfo;
}

/** One log record flowing through the shim (system logs from the library, user logs from `context.log`). */
export interface CoreLogEntry {
  level: RpcLogLevel;
  category: RpcLogCategory;
  message: string;
  functionName?: string;
  invocationId?: string;
}

/** Per-invocation data the worker attaches to log hook contexts. */
export interface InvocationLogContext {
  hookData: Record<string, unknown>;
  invocationContext: unknown;
}

/** The `@azure/functions-core` API object handed to the library. */
export interface CoreApi {
  readonly version: string;
  readonly hostVersion: string;
  setProgrammingModel(model: ProgrammingModel): void;
  getProgrammingModel(): ProgrammingModel | undefined;
  registerFunction(metadata: CoreFunctionMetadata, callback: FunctionCallback): Disposable;
  registerHook(hookName: string, callback: HookCallback): Disposable;
  log(level: RpcLogLevel, category: RpcLogCategory, message: string): void;
  readonly Disposable: typeof Disposable;
}

const HOOK_NAMES: readonly HookName[] = ['appStart', 'appTerminate', 'preInvocation', 'postInvocation', 'log'];

function systemError<E extends Error>(err: E): E {
  // Same marker the library/worker use to tell system errors from user errors.
  return Object.assign(err, { isAzureFunctionsSystemError: true });
}

/**
 * Process-wide record of everything the app registered through `@azure/functions`.
 * Mirrors the worker's `AppContext` (functions, hooks, programming model, app hook data).
 */
export class CoreRegistry {
  /** Registered functions by name, in registration order. */
  readonly functions = new Map<string, RegisteredFunction>();
  /** Registered hook callbacks by hook name, in registration order. */
  readonly hooks: Record<HookName, HookCallback[]> = {
    appStart: [],
    appTerminate: [],
    preInvocation: [],
    postInvocation: [],
    log: [],
  };
  /** Shared by all hooks (`context.appHookData` in the core API). */
  readonly appHookData: Record<string, unknown> = {};
  /** `hookData` shared by appStart and appTerminate hooks only. */
  readonly appLevelOnlyHookData: Record<string, unknown> = {};
  /** Where log entries end up after log hooks ran; the host replaces this. */
  logSink: (entry: CoreLogEntry) => void = defaultLogSink;
  /** True if `@azure/functions` was already loaded when the shim was installed (it may be stuck in test mode). */
  readonly libraryLoadedBeforeShim: boolean;
  /** The object `require('@azure/functions-core')` returns. */
  readonly api: CoreApi;

  #programmingModel: ProgrammingModel | undefined;
  #functionsLocked = false;

  /** @param libraryLoadedBeforeShim - see {@link CoreRegistry.libraryLoadedBeforeShim} */
  constructor(libraryLoadedBeforeShim = false) {
    this.libraryLoadedBeforeShim = libraryLoadedBeforeShim;
    this.api = Object.freeze({
      version: '4.0.0-local',
      hostVersion: '4.1000.0-local',
      setProgrammingModel: (m: ProgrammingModel) => this.setProgrammingModel(m),
      getProgrammingModel: () => this.programmingModel,
      registerFunction: (md: CoreFunctionMetadata, cb: FunctionCallback) => this.registerFunction(md, cb),
      registerHook: (name: string, cb: HookCallback) => this.registerHook(name, cb),
      log: (level: RpcLogLevel, category: RpcLogCategory, message: string) =>
        this.emitLog({ level, category, message }),
      Disposable,
    });
  }

  /** The programming model set by `@azure/functions` (on its first registration), if any. */
  get programmingModel(): ProgrammingModel | undefined {
    return this.#programmingModel;
  }

  /** Whether function registration has been closed (the worker closes it after app startup). */
  get functionsLocked(): boolean {
    return this.#functionsLocked;
  }

  /** Core API `setProgrammingModel`: the last one set wins, as in the worker. */
  setProgrammingModel(model: ProgrammingModel): void {
    this.#programmingModel = model;
  }

  /** Core API `registerFunction`; same validation as the worker (unique id, only during startup). */
  registerFunction(metadata: CoreFunctionMetadata, callback: FunctionCallback): Disposable {
    if (this.#functionsLocked) {
      throw systemError(new Error('A function can only be registered during app startup.'));
    }
    const name = metadata.functionId || metadata.name;
    if (!name) throw systemError(new Error('Function metadata is missing "name".'));
    if (this.functions.has(name)) {
      throw systemError(new Error(`A function with id "${name}" has already been registered.`));
    }
    const entry = Object.entries(metadata.bindings ?? {}).find(([, b]) => /trigger$/i.test(b.type ?? ''));
    if (!entry) throw systemError(new Error(`Function "${name}" has no trigger binding.`));
    const [triggerName, trigger] = entry;
    this.functions.set(name, { name, metadata, callback, triggerName, trigger });
    return new Disposable(() => {
      if (this.#functionsLocked) {
        throw systemError(new Error('A function can only be disposed during app startup.'));
      }
      this.functions.delete(name);
    });
  }

  /** Core API `registerHook`; unknown hook names throw a RangeError like the worker's `getHooks`. */
  registerHook(hookName: string, callback: HookCallback): Disposable {
    if (!(HOOK_NAMES as readonly string[]).includes(hookName)) {
      throw systemError(new RangeError(`Unrecognized hook "${hookName}"`));
    }
    const list = this.hooks[hookName as HookName];
    list.push(callback);
    return new Disposable(() => {
      const i = list.indexOf(callback);
      if (i > -1) list.splice(i, 1);
    });
  }

  /** Closes function registration (called by the host once app modules are loaded). */
  lockFunctions(): void {
    this.#functionsLocked = true;
  }

  /** Looks a function up by name. */
  getFunction(name: string): RegisteredFunction | undefined {
    return this.functions.get(name);
  }

  /**
   * Runs `log` hooks (synchronously, errors ignored, like the worker) and forwards the entry to
   * {@link CoreRegistry.logSink}. Hooks may change level/message of user logs only.
   */
  emitLog(entry: CoreLogEntry, invocation?: InvocationLogContext): void {
    const out = { ...entry };
    try {
      if (this.hooks.log.length > 0) {
        const ctx: Record<string, unknown> = {
          level: entry.level,
          message: entry.message,
          category: entry.category,
          hookData: invocation?.hookData ?? {},
          appHookData: this.appHookData,
          invocationContext: invocation?.invocationContext,
        };
        for (const hook of this.hooks.log) void hook(ctx);
        if (entry.category === 'user') {
          out.level = ctx['level'] as RpcLogLevel;
          out.message = String(ctx['message']);
        }
      }
    } catch {
      // user hooks must not prevent logging
    }
    this.logSink(out);
  }
}

/** Default sink: user logs and system warnings/errors to the console. */
function defaultLogSink(e: CoreLogEntry): void {
  const important = e.level === 'warning' || e.level === 'error' || e.level === 'critical';
  if (e.category !== 'user' && !important) return;
  const line = `[${e.level}]${e.functionName ? ` ${e.functionName}:` : ''} ${e.message}`;
  (important ? console.error : console.log)(line);
}

const GLOBAL_KEY = Symbol.for('local.azure-functions-core-shim');

type LoadFn = (this: unknown, request: string, parent: unknown, isMain: boolean) => unknown;

function isLibraryLoaded(): boolean {
  try {
    const resolved = require.resolve('@azure/functions');
    return resolved in require.cache;
  } catch {
    return false;
  }
}

/**
 * Installs a `Module._load` hook answering `require('@azure/functions-core')` with the shim's
 * core API, and returns the process-wide registry. Idempotent: later calls (even from another
 * copy of this file) return the same registry.
 *
 * Must run before the app's first `app.*` registration; if `@azure/functions` was already
 * loaded, {@link CoreRegistry.libraryLoadedBeforeShim} is set and a warning is printed, because
 * the library caches a failed core lookup ("test mode") for the life of the process.
 */
export function installCoreShim(): CoreRegistry {
  const g = globalThis as unknown as Record<symbol, CoreRegistry | undefined>;
  const existing = g[GLOBAL_KEY];
  if (existing) return existing;

  const preloaded = isLibraryLoaded();
  const registry = new CoreRegistry(preloaded);
  const mod = Module as unknown as { _load: LoadFn };
  const originalLoad = mod._load;
  mod._load = function (this: unknown, request: string, parent: unknown, isMain: boolean): unknown {
    if (request === CORE_MODULE_ID) return registry.api;
    return originalLoad.call(this, request, parent, isMain);
  };
  g[GLOBAL_KEY] = registry;
  if (preloaded) {
    console.warn(
      'WARNING: "@azure/functions" was loaded before the local core shim was installed; ' +
        'if it already looked up the runtime it is stuck in test mode and will register nothing.',
    );
  }
  return registry;
}
