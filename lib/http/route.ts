/**
 * The register-helper of the adapters: {@link route} turns a contract and a handler into the `app.http` options of the
 * route (its template, method and auth level from the contract), compiled once: the query's names checked before the
 * handler runs, the body read (bounded, JSON) and validated when the handler asks for it, the answer written by the
 * contract's serializer, and any error answered as problem+json (`withProblems`), or, for a contract that declares a
 * protocol's own `error` shape, by that protocol's writer (`options.errorResponse`). A route that `uses` subsystems
 * receives them (typed) as its handler's second argument; when one of them is off (a setting switches it off), the
 * route answers that problem, decided at registration, and its handler never runs ({@link Uses}, {@link using}).
 * @module
 */
import type { HttpFunctionOptions, HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { AppError } from '../errors/errors';
import {
  compileContract,
  queryNameErrors,
  type BodyOf,
  type Contract,
  type ErrorOf,
  type ResponseOf,
} from './contract';
import { readJsonBody, withProblems } from './http-io';

/** What a handler reads of its request, through its contract. */
export interface RouteInput<C extends Contract> {
  /** A path parameter, raw (the service checks it). */
  param(name: string): string | undefined;
  /** The query (its names already checked against the contract). */
  readonly query: URLSearchParams;
  /**
   * Reads the JSON body (at most `limitBytes`, default the contract's) and validates it with the contract's schema.
   * @throws AppError `unsupported_media_type`, `payload_too_large`, `invalid_json`, `validation_failed`.
   */
  body(limitBytes?: number): Promise<BodyOf<C>>;
  /**
   * Reads the JSON body (at most `limitBytes`, default the contract's) without the contract's schema: for a body the
   * service parses itself (a protocol's strict parser and its messages); the contract's `body` documents its shape.
   * @throws AppError `unsupported_media_type`, `payload_too_large`, `invalid_json`.
   */
  json(limitBytes?: number): Promise<unknown>;
}

/**
 * A handler's answer: the status (default the contract's), the body (the contract's response) and headers; or, for a
 * contract that declares its own `error` body, that error answered with `status`.
 */
export type Reply<C extends Contract> =
  | {
      readonly status?: number;
      readonly body?: ResponseOf<C>;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | { readonly status: number; readonly error: ErrorOf<C>; readonly headers?: Readonly<Record<string, string>> };

/** A route's handler. */
export type RouteHandler<C extends Contract> = (
  input: RouteInput<C>,
  request: HttpRequest,
  context: InvocationContext,
) => Promise<Reply<C>>;

/** A route's handler that uses subsystems: it receives them, typed, after its input. */
export type UsingHandler<C extends Contract, S> = (
  input: RouteInput<C>,
  subsystems: S,
  request: HttpRequest,
  context: InvocationContext,
) => Promise<Reply<C>>;

/**
 * The subsystems `S` a function uses (lib/app.ts `subsystems(...)`): whether one of them is off is decided when the
 * function registers, from the settings; otherwise they are resolved at each invocation.
 */
export interface Uses<S> {
  /** The problem the function answers instead of running, when a subsystem it uses is off (decided at registration). */
  readonly off: AppError | undefined;
  /** The subsystems, on. */
  resolve(): Promise<S>;
}

/** How the adapter resolves `people` (lib/app.ts: `function`, or `anonymous` behind Easy Auth). */
export interface RouteOptions {
  readonly people?: 'anonymous' | 'function';
  /**
   * How any error is answered: a protocol's own error writer, for a contract that declares its `error` shape (e.g.
   * `oipRoute` of lib/oip/oip-http.ts). Default problem+json.
   */
  readonly errorResponse?: (err: unknown, context: InvocationContext) => HttpResponseInit;
}

/**
 * A trigger's handler (queue, blob) given the subsystems it uses: when one is off, every invocation fails with the
 * problem decided at registration (`uses.off`) and `handler` never runs.
 */
export function using<S, A extends unknown[], R>(
  uses: Uses<S>,
  handler: (subsystems: S, ...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  const off = uses.off;
  if (off !== undefined) return () => Promise.reject(off);
  return async (...args) => handler(await uses.resolve(), ...args);
}

/** Whether a request carries no body (`POST .../secrets` may have none). */
function hasNoBody(request: HttpRequest): boolean {
  const length = request.headers.get('content-length');
  if (request.body === null || length === '0') return true;
  return length === null && (request.headers.get('content-type') ?? '') === '';
}

const DEFAULT_BODY_LIMIT_BYTES = 16 * 1024;

/** Reads a request's JSON body, at most `limitBytes` (default the contract's, else 16 KiB). */
function readJson(contract: Contract, request: HttpRequest, limitBytes: number | undefined): Promise<unknown> {
  return readJsonBody(request, limitBytes ?? contract.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES);
}

/**
 * The `app.http` options of `contract`'s route, running `handler` with the subsystems of `options.uses`; when one of
 * them is off, the route answers the problem decided at registration (`uses.off`) and `handler` never runs.
 */
export function route<C extends Contract, S>(
  contract: C,
  handler: UsingHandler<C, S>,
  options: RouteOptions & { readonly uses: Uses<S> },
): HttpFunctionOptions;
/** The `app.http` options of `contract`'s route, running `handler`. */
export function route<C extends Contract>(
  contract: C,
  handler: RouteHandler<C>,
  options?: RouteOptions & { readonly uses?: undefined },
): HttpFunctionOptions;
export function route<C extends Contract, S>(
  contract: C,
  handler: RouteHandler<C> | UsingHandler<C, S>,
  options: RouteOptions & { readonly uses?: Uses<S> } = {},
): HttpFunctionOptions {
  const off = options.uses?.off; // decided at registration: answered before anything of the request is read
  const run = handlerOf(handler, options.uses);
  const compiled = compileContract(contract);
  if (contract.auth === 'people' && options.people === undefined)
    throw new Error(`${contract.name}: a people route needs options.people`);
  const authLevel = contract.auth === 'people' ? (options.people ?? 'function') : contract.auth;
  if ((contract.error === undefined) !== (options.errorResponse === undefined))
    throw new Error(`${contract.name}: a declared error shape needs its errorResponse, and only it`);
  return {
    route: contract.route,
    methods: [contract.method],
    authLevel,
    handler: withProblems(async (request, context): Promise<HttpResponseInit> => {
      if (off !== undefined) throw off;
      if (compiled.queryNames.length > 0) {
        const errors = queryNameErrors(request.query, compiled.queryNames);
        if (errors.length > 0)
          throw new AppError('validation_failed', `${errors.length} invalid query parameter(s).`, { errors });
      }
      const input: RouteInput<C> = {
        param: (name) => request.params[name],
        query: request.query,
        body: async (limitBytes) => {
          if (contract.bodyOptional === true && hasNoBody(request)) return undefined as BodyOf<C>;
          return compiled.parseBody(await readJson(contract, request, limitBytes));
        },
        json: async (limitBytes) =>
          contract.bodyOptional === true && hasNoBody(request) ? undefined : readJson(contract, request, limitBytes),
      };
      const reply = await run(input, request, context);
      const headers = { 'cache-control': 'no-store', ...reply.headers };
      if ('error' in reply)
        return {
          status: reply.status,
          body: compiled.serializeError(reply.error),
          headers: { 'content-type': 'application/json', ...headers },
        };
      if (reply.body === undefined) return { status: reply.status ?? contract.status, headers };
      return {
        status: reply.status ?? contract.status,
        body: compiled.serialize(reply.body),
        headers: { 'content-type': 'application/json', ...headers },
      };
    }, options.errorResponse),
  };
}

/** The handler a route runs, chosen at registration: `uses.off` answered when a subsystem it uses is off. */
function handlerOf<C extends Contract, S>(
  handler: RouteHandler<C> | UsingHandler<C, S>,
  uses: Uses<S> | undefined,
): RouteHandler<C> {
  if (uses === undefined) return handler as RouteHandler<C>;
  const h = handler as UsingHandler<C, S>;
  return using(uses, (subsystems: S, input: RouteInput<C>, request: HttpRequest, context: InvocationContext) =>
    h(input, subsystems, request, context),
  );
}
