/**
 * Type declarations for the `@azure/functions-core` seam: the module that the Azure Functions
 * Node.js worker injects at runtime and that `@azure/functions` (v4 programming model) requires
 * to register functions and hooks.
 *
 * These mirror `types-core/index.d.ts` of azure-functions-nodejs-worker (the subset that
 * `@azure/functions` 4.x actually uses). Only shapes are declared here; no runtime code.
 *
 * @module
 */

/** Log levels accepted by the core `log` functions. */
export type RpcLogLevel = 'trace' | 'debug' | 'information' | 'warning' | 'error' | 'critical' | 'none';

/** Log categories accepted by the core `log` functions. */
export type RpcLogCategory = 'user' | 'system' | 'customMetric';

/** Binding direction as sent in function metadata. */
export type RpcBindingDirection = 'in' | 'out' | 'inout';

/**
 * One binding of a registered function, exactly as `@azure/functions` hands it over:
 * `{ name, type, direction, ...triggerOrBindingOptions }` (e.g. `route`, `methods`, `authLevel`,
 * `queueName`, `connection`, `%SETTING%` strings, `properties.supportsDeferredBinding`).
 */
export interface RpcBindingInfo {
  type?: string | null;
  direction?: RpcBindingDirection | null;
  dataType?: 'undefined' | 'string' | 'binary' | 'stream' | null;
  [option: string]: unknown;
}

/** Function metadata as passed to `registerFunction` (output of the library's `toCoreFunctionMetadata`). */
export interface CoreFunctionMetadata {
  name: string;
  /** Only set by callers that register through the raw core API; the library never sets it. */
  functionId?: string;
  /** Binding name -> binding. The trigger binding name is generated (`<type><hash>`) unless given. */
  bindings: Record<string, RpcBindingInfo>;
  retryOptions?: unknown;
  [key: string]: unknown;
}

/** The callback a function was registered with (the user's handler). */
export type FunctionCallback = (...args: unknown[]) => unknown;

/** RPC typed data, the wire format for inputs, outputs and trigger metadata. */
export interface RpcTypedData {
  string?: string | null;
  json?: string | null;
  bytes?: Uint8Array | null;
  stream?: Uint8Array | null;
  http?: RpcHttpData | null;
  int?: number | null;
  double?: number | null;
  collectionBytes?: { bytes?: Uint8Array[] | null } | null;
  collectionString?: { string?: string[] | null } | null;
  collectionDouble?: { double?: number[] | null } | null;
  collectionSint64?: { sint64?: number[] | null } | null;
  /** Deferred binding (`sdkBinding: true`): a reference to the resource instead of its content. */
  modelBindingData?: RpcModelBindingData | null;
}

/** Model binding data: what a deferred binding passes (e.g. source `AzureStorageBlobs`, JSON content naming the blob). */
export interface RpcModelBindingData {
  version?: string | null;
  source?: string | null;
  contentType?: string | null;
  content?: Uint8Array | null;
}

/** Nullable string wrapper used by the RPC protocol. */
export interface RpcNullableString {
  value?: string | null;
}

/** A cookie in an RPC http response (nullable wrappers as produced by the library's `toRpcHttpCookie`). */
export interface RpcHttpCookie {
  name?: string | null;
  value?: string | null;
  domain?: RpcNullableString | null;
  path?: RpcNullableString | null;
  expires?: { value?: { seconds?: number | null; nanos?: number | null } | null } | null;
  secure?: { value?: boolean | null } | null;
  httpOnly?: { value?: boolean | null } | null;
  sameSite?: 'none' | 'lax' | 'strict' | 'explicitNone' | null;
  maxAge?: { value?: number | null } | null;
}

/** RPC http data: a request (host -> worker) or a response (worker -> host). */
export interface RpcHttpData {
  method?: string | null;
  url?: string | null;
  headers?: Record<string, string> | null;
  body?: RpcTypedData | null;
  params?: Record<string, string> | null;
  statusCode?: string | null;
  query?: Record<string, string> | null;
  enableContentNegotiation?: boolean | null;
  rawBody?: RpcTypedData | null;
  cookies?: RpcHttpCookie[] | null;
  nullableHeaders?: Record<string, RpcNullableString> | null;
  nullableParams?: Record<string, RpcNullableString> | null;
  nullableQuery?: Record<string, RpcNullableString> | null;
}

/** A named piece of typed data (input or output binding value). */
export interface RpcParameterBinding {
  name?: string | null;
  data?: RpcTypedData | null;
}

/** Retry context for triggers with retry policies. */
export interface RpcRetryContext {
  retryCount?: number | null;
  maxRetryCount?: number | null;
  exception?: { source?: string | null; stackTrace?: string | null; message?: string | null } | null;
}

/** W3C trace context. */
export interface RpcTraceContext {
  traceParent?: string | null;
  traceState?: string | null;
  attributes?: Record<string, string> | null;
}

/** The invocation request the host sends to the worker. */
export interface RpcInvocationRequest {
  invocationId?: string | null;
  functionId?: string | null;
  inputData?: RpcParameterBinding[] | null;
  triggerMetadata?: Record<string, RpcTypedData> | null;
  traceContext?: RpcTraceContext | null;
  retryContext?: RpcRetryContext | null;
}

/** The invocation response the worker sends back to the host. */
export interface RpcInvocationResponse {
  invocationId?: string | null;
  outputData?: RpcParameterBinding[] | null;
  returnValue?: RpcTypedData | null;
  result?: unknown;
}

/** Which phase an invocation is in (read by the library to warn about logs after completion). */
export type InvocationState = 'preInvocationHooks' | 'postInvocationHooks' | 'invocation';

/** What the worker gives `ProgrammingModel.getInvocationModel`. */
export interface CoreInvocationContext {
  invocationId: string;
  request: RpcInvocationRequest;
  metadata: CoreFunctionMetadata;
  state?: InvocationState;
  log(level: RpcLogLevel, category: RpcLogCategory, message: string): void;
}

/** Per-invocation model returned by the programming model. */
export interface InvocationModel {
  getArguments(): Promise<{ context: unknown; inputs: unknown[] }>;
  invokeFunction(context: unknown, inputs: unknown[], callback: FunctionCallback): Promise<unknown>;
  getResponse(context: unknown, result: unknown): Promise<RpcInvocationResponse>;
}

/** The programming model object `@azure/functions` installs via `setProgrammingModel`. */
export interface ProgrammingModel {
  name: string;
  version: string;
  getInvocationModel(coreContext: CoreInvocationContext): InvocationModel | Promise<InvocationModel>;
  getCapabilities?(capabilities: Record<string, string>): Promise<Record<string, string>> | Record<string, string>;
}

/** Names of the lifecycle hooks the core API accepts. */
export type HookName = 'appStart' | 'appTerminate' | 'preInvocation' | 'postInvocation' | 'log';

/** A hook callback; receives the core hook context object (the library wraps it in its own class). */
export type HookCallback = (context: Record<string, unknown>) => void | Promise<void>;
