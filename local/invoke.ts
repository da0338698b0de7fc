/**
 * Invocation pipeline, performed the way the Node.js worker's `InvocationHandler` does it:
 * `getInvocationModel` -> `getArguments` -> preInvocation hooks -> `invokeFunction` ->
 * postInvocation hooks -> `getResponse`. All data conversion is done by `@azure/functions`
 * itself (its `InvocationModel`); this module only builds RPC requests and runs hooks.
 *
 * @module
 */
import { randomUUID } from 'crypto';
import type { CoreRegistry, InvocationLogContext, RegisteredFunction } from './core-shim';
import type {
  CoreInvocationContext,
  FunctionCallback,
  HookName,
  InvocationState,
  RpcInvocationRequest,
  RpcInvocationResponse,
  RpcLogCategory,
  RpcLogLevel,
  RpcParameterBinding,
  RpcRetryContext,
  RpcTraceContext,
  RpcTypedData,
} from './core-types';
import { decodeTypedData, encodeCollection, encodeTypedData } from './rpc';

/** Defines a read-only (throwing setter) property, like the worker's hook context objects. */
function readOnly(target: Record<string, unknown>, name: string, get: () => unknown): void {
  Object.defineProperty(target, name, {
    enumerable: true,
    get,
    set() {
      throw Object.assign(new TypeError(`Cannot assign to read only property '${name}'`), {
        isAzureFunctionsSystemError: true,
      });
    },
  });
}

async function executeHooks(registry: CoreRegistry, name: HookName, ctx: Record<string, unknown>): Promise<void> {
  for (const hook of [...registry.hooks[name]]) await hook(ctx);
}

/**
 * Runs the app-level hooks (`appStart` / `appTerminate`) with the worker's context shape:
 * `{ hookData (shared by appStart+appTerminate), appHookData, functionAppDirectory? }`.
 */
export async function runAppHooks(
  registry: CoreRegistry,
  name: 'appStart' | 'appTerminate',
  functionAppDirectory: string,
): Promise<void> {
  const ctx: Record<string, unknown> = {};
  readOnly(ctx, 'hookData', () => registry.appLevelOnlyHookData);
  readOnly(ctx, 'appHookData', () => registry.appHookData);
  if (name === 'appStart') ctx['functionAppDirectory'] = functionAppDirectory;
  await executeHooks(registry, name, ctx);
}

/** Options of {@link invokeRpc}. */
export interface InvokeRpcOptions {
  /**
   * Print the host's `Executing …` / `Executed …` lines for this invocation, as `func start` does.
   * Default false: per-invocation lines cost the event loop on every request (the local host's
   * `--verbose` / `LOCAL_HOST_VERBOSE=1` turns them on).
   */
  invocationLog?: boolean;
}

/**
 * Invokes a registered function with a raw RPC invocation request (what the host would send)
 * and returns the raw RPC response produced by the library. Throws whatever the handler (or a
 * hook) threw, after postInvocation hooks had a chance to clear or replace the error. Fills in
 * `request.invocationId` (random UUID) and `request.functionId` (the function's name) when missing,
 * in place: the request is the host's own per-invocation object, not copied per request.
 */
export async function invokeRpc(
  registry: CoreRegistry,
  fn: RegisteredFunction,
  request: RpcInvocationRequest,
  options: InvokeRpcOptions = {},
): Promise<RpcInvocationResponse> {
  const invocationId = request.invocationId || randomUUID();
  request.invocationId = invocationId;
  request.functionId ??= fn.name;
  let logCtx: InvocationLogContext | undefined;
  const coreCtx: CoreInvocationContext = {
    invocationId,
    request,
    metadata: fn.metadata,
    state: undefined as InvocationState | undefined,
    log(level: RpcLogLevel, category: RpcLogCategory, message: string): void {
      registry.emitLog({ level, category, message, functionName: fn.name, invocationId }, logCtx);
    },
  };
  const setLogCtx = (ctx: InvocationLogContext): void => void (logCtx = ctx);
  if (options.invocationLog !== true) return runInvocation(registry, fn, coreCtx, setLogCtx);
  // Host-side lines, as `func start` prints them (not subject to log hooks: they're not worker logs).
  const started = Date.now();
  const hostLog = (level: RpcLogLevel, message: string): void =>
    registry.logSink({ level, category: 'system', message, functionName: fn.name, invocationId });
  hostLog('information', `Executing 'Functions.${fn.name}' (Id=${invocationId})`);
  try {
    const response = await runInvocation(registry, fn, coreCtx, setLogCtx);
    hostLog(
      'information',
      `Executed 'Functions.${fn.name}' (Succeeded, Id=${invocationId}, Duration=${Date.now() - started}ms)`,
    );
    return response;
  } catch (err) {
    hostLog(
      'error',
      `Executed 'Functions.${fn.name}' (Failed, Id=${invocationId}, Duration=${Date.now() - started}ms)`,
    );
    throw err;
  }
}

/** Runs the pre/post invocation hooks with a context carrying the read-only hook and invocation data. */
async function invocationHooks(
  registry: CoreRegistry,
  coreCtx: CoreInvocationContext,
  kind: 'preInvocation' | 'postInvocation',
  hookCtx: Record<string, unknown>,
  hookData: Record<string, unknown>,
  context: unknown,
): Promise<void> {
  readOnly(hookCtx, 'hookData', () => hookData);
  readOnly(hookCtx, 'appHookData', () => registry.appHookData);
  readOnly(hookCtx, 'invocationContext', () => context);
  coreCtx.state = `${kind}Hooks`;
  try {
    await executeHooks(registry, kind, hookCtx);
  } finally {
    coreCtx.state = undefined;
  }
}

async function runInvocation(
  registry: CoreRegistry,
  fn: RegisteredFunction,
  coreCtx: CoreInvocationContext,
  setLogCtx: (ctx: InvocationLogContext) => void,
): Promise<RpcInvocationResponse> {
  const model = registry.programmingModel;
  if (!model) throw new Error('No programming model was set; did the app register any function?');
  const invocModel = await model.getInvocationModel(coreCtx);
  const hookData: Record<string, unknown> = {};
  const args = await invocModel.getArguments();
  const context = args.context;
  setLogCtx({ hookData, invocationContext: context });

  // hook contexts (read-only properties, like the worker's) are built only when such hooks exist
  let inputs = args.inputs;
  let callback = fn.callback;
  if (registry.hooks.preInvocation.length > 0) {
    const pre: Record<string, unknown> = { functionCallback: fn.callback, inputs: args.inputs };
    await invocationHooks(registry, coreCtx, 'preInvocation', pre, hookData, context);
    inputs = pre['inputs'] as unknown[];
    callback = pre['functionCallback'] as FunctionCallback;
  }

  let result: unknown = null;
  let error: unknown = null;
  coreCtx.state = 'invocation';
  try {
    result = await invocModel.invokeFunction(context, inputs, callback);
  } catch (err) {
    error = err;
  } finally {
    coreCtx.state = undefined;
  }
  if (registry.hooks.postInvocation.length > 0) {
    const post: Record<string, unknown> = { inputs, result, error };
    await invocationHooks(registry, coreCtx, 'postInvocation', post, hookData, context);
    result = post['result'];
    error = post['error'];
  }
  if (error !== null && error !== undefined) throw error;
  return invocModel.getResponse(context, result);
}

/** Options for {@link invoke}. */
export interface InvokeOptions {
  /** Invocation id (default: random UUID). */
  invocationId?: string;
  /** Values for extra input bindings, by binding name (encoded like the trigger input). */
  extraInputs?: Record<string, unknown>;
  /** See {@link InvokeRpcOptions.invocationLog}. Default false. */
  invocationLog?: boolean;
  /** Retry context, as the host sends it for triggers with a retry policy. */
  retryContext?: RpcRetryContext;
  /** W3C trace context. */
  traceContext?: RpcTraceContext;
  /**
   * `many`: the trigger value is a batch (an array), encoded as the host encodes one
   * ({@link encodeCollection}); per-message metadata then goes in `…Array` keys. Default `one`.
   */
  cardinality?: 'one' | 'many';
  /**
   * Add the host's `sys` trigger metadata (`{ MethodName, UtcNow, RandGuid }`) unless given.
   * Default true.
   */
  sysMetadata?: boolean;
}

/** Result of {@link invoke}: the library's RPC response, decoded. */
export interface InvokeResult {
  invocationId: string;
  /** Decoded `returnValue` (for http-return functions: a `DecodedHttpResponse`). */
  returnValue: unknown;
  /** Decoded output binding values by binding name (only bindings the handler set). */
  outputData: Record<string, unknown>;
  /** The raw RPC response. */
  raw: RpcInvocationResponse;
}

/**
 * Invokes any function (typically a non-http trigger) with a plain JS trigger value.
 *
 * The trigger value and each trigger-metadata value are encoded as the host would send them
 * ({@link encodeTypedData}: string -> `string`, Buffer -> `bytes`, object -> `json`, ...).
 * Trigger metadata keys should use the host's PascalCase (`MessageId`, `DeliveryCount`,
 * `BlobTrigger`, `Uri`, ...); the library camel-cases them into `context.triggerMetadata`.
 */
export async function invoke(
  registry: CoreRegistry,
  fn: RegisteredFunction,
  triggerValue: unknown,
  triggerMetadata: Record<string, unknown> = {},
  options: InvokeOptions = {},
): Promise<InvokeResult> {
  const invocationId = options.invocationId || randomUUID();
  const data =
    options.cardinality === 'many' && Array.isArray(triggerValue)
      ? encodeCollection(triggerValue)
      : encodeTypedData(triggerValue);
  const inputData: RpcParameterBinding[] = [{ name: fn.triggerName, data: data ?? null }];
  for (const [name, value] of Object.entries(options.extraInputs ?? {})) {
    inputData.push({ name, data: encodeTypedData(value) ?? null });
  }
  const md: Record<string, RpcTypedData> = {};
  for (const [key, value] of Object.entries(triggerMetadata)) {
    const encoded = encodeTypedData(value);
    if (encoded) md[key] = encoded;
  }
  if (options.sysMetadata !== false && !('sys' in md)) {
    md['sys'] = {
      json: JSON.stringify({ MethodName: fn.name, UtcNow: new Date().toISOString(), RandGuid: randomUUID() }),
    };
  }
  const raw = await invokeRpc(
    registry,
    fn,
    {
      invocationId,
      inputData,
      triggerMetadata: md,
      retryContext: options.retryContext ?? null,
      traceContext: options.traceContext ?? null,
    },
    { invocationLog: options.invocationLog },
  );
  return decodeResponse(invocationId, raw);
}

/** Decodes an RPC invocation response into an {@link InvokeResult}. */
export function decodeResponse(invocationId: string, raw: RpcInvocationResponse): InvokeResult {
  const outputData: Record<string, unknown> = {};
  for (const binding of raw.outputData ?? []) {
    if (binding.name) outputData[binding.name] = decodeTypedData(binding.data);
  }
  return { invocationId, returnValue: decodeTypedData(raw.returnValue), outputData, raw };
}

/**
 * Resolves `%SETTING%` binding expressions against app settings (environment), the way the host
 * resolves e.g. `queueName: '%SCORING_QUEUE%'`. Unknown settings are left as-is.
 */
export function resolveAppSettings(value: string, env: NodeJS.ProcessEnv = process.env): string {
  return value.replace(/%([^%]+)%/g, (whole, name: string) => env[name] ?? whole);
}
