/**
 * The register-helper of the adapters: {@link route} turns a contract and a handler into the `app.http` options of the
 * route (its template, method and auth level from the contract), compiled once: the query's names checked before the
 * handler runs, the body read (bounded, JSON) and validated when the handler asks for it, the answer written by the
 * contract's serializer, and any error answered as problem+json (`withProblems`).
 * @module
 */
import type { HttpFunctionOptions, HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { AppError } from '../errors/errors';
import { compileContract, queryNameErrors, type BodyOf, type Contract, type ResponseOf } from './contract';
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
}

/** A handler's answer: the status (default the contract's), the body (the contract's response) and headers. */
export interface Reply<C extends Contract> {
  readonly status?: number;
  readonly body?: ResponseOf<C>;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A route's handler. */
export type RouteHandler<C extends Contract> = (
  input: RouteInput<C>,
  request: HttpRequest,
  context: InvocationContext,
) => Promise<Reply<C>>;

/** How the adapter resolves `people` (lib/app.ts: `function`, or `anonymous` behind Easy Auth). */
export interface RouteOptions {
  readonly people?: 'anonymous' | 'function';
}

/** Whether a request carries no body (`POST .../secrets` may have none). */
function hasNoBody(request: HttpRequest): boolean {
  const length = request.headers.get('content-length');
  if (request.body === null || length === '0') return true;
  return length === null && (request.headers.get('content-type') ?? '') === '';
}

const DEFAULT_BODY_LIMIT_BYTES = 16 * 1024;

/** The `app.http` options of `contract`'s route, running `handler`. */
export function route<C extends Contract>(
  contract: C,
  handler: RouteHandler<C>,
  options: RouteOptions = {},
): HttpFunctionOptions {
  const compiled = compileContract(contract);
  if (contract.auth === 'people' && options.people === undefined)
    throw new Error(`${contract.name}: a people route needs options.people`);
  const authLevel = contract.auth === 'people' ? (options.people ?? 'function') : contract.auth;
  return {
    route: contract.route,
    methods: [contract.method],
    authLevel,
    handler: withProblems(async (request, context): Promise<HttpResponseInit> => {
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
          const raw = await readJsonBody(request, limitBytes ?? contract.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES);
          return compiled.parseBody(raw);
        },
      };
      const reply = await handler(input, request, context);
      const headers = { 'cache-control': 'no-store', ...reply.headers };
      if (reply.body === undefined) return { status: reply.status ?? contract.status, headers };
      return {
        status: reply.status ?? contract.status,
        body: compiled.serialize(reply.body),
        headers: { 'content-type': 'application/json', ...headers },
      };
    }),
  };
}
