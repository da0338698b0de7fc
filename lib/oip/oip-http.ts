/**
 * HTTP mapping of the Open Inference Protocol endpoints: {@link oipRoute} registers a route of lib/contracts/oip.ts
 * as `route()` does (the contract compiled once, the subsystems it uses), except that every error is the protocol's
 * `{ "error": "<message>" }` with `content-type: application/json` (not problem+json), with the status of its
 * stable code (`lib/errors/errors.ts`) and `Retry-After` where the code has one.
 */
import type { HttpFunctionOptions, HttpResponseInit, InvocationContext } from '@azure/functions';
import { toAppError } from '../errors/errors';
import type { Contract } from '../http/contract';
import { jsonResponse } from '../http/http-io';
import { route, type RouteHandler, type Uses, type UsingHandler } from '../http/route';
import type { ReadyAnswer } from './oip-service';

/** The protocol's error message of any thrown value: the detail, then every invalid field (`path: message`). */
export function oipErrorMessage(err: unknown): string {
  const e = toAppError(err);
  if (e.errors.length === 0) return e.message;
  return `${e.message} ${e.errors.map((f) => (f.path === '' ? f.message : `${f.path}: ${f.message}`)).join('; ')}`;
}

/** An error response: `{ error }`, the code's status, `Retry-After` for retryable (503) codes. Unexpected errors are logged by code only. */
export function oipErrorResponse(err: unknown, context?: InvocationContext): HttpResponseInit {
  const e = toAppError(err);
  if (e.status >= 500 && context !== undefined) {
    const cause = e.cause instanceof Error ? `${e.cause.name}: ${e.cause.message}` : undefined;
    context.error(`request failed: ${e.code}`, cause ?? '');
  }
  const retry: Record<string, string> =
    e.retryAfterSec !== undefined || e.status === 503
      ? { 'retry-after': String(Math.max(1, Math.ceil(e.retryAfterSec ?? 1))) }
      : {};
  return jsonResponse(e.status, { error: oipErrorMessage(e) }, retry);
}

/** A readiness reply: 200 with `body` and `ready: true` when ready; else 400 `{ error: reason }` (the protocol: a 4xx status means false). */
export function readyReply<B extends object>(
  r: ReadyAnswer,
  body: B,
): { readonly body: B & { ready: true } } | { readonly status: 400; readonly error: { error: string } } {
  return r.ready ? { body: { ...body, ready: true } } : { status: 400, error: { error: r.reason } };
}

/**
 * The `app.http` options of an OIP contract's route, running `handler` with the subsystems of `options.uses` (when
 * one of them is off, the route answers its `not_found` as `{ error }` and `handler` never runs).
 */
export function oipRoute<C extends Contract, S>(
  contract: C,
  handler: UsingHandler<C, S>,
  options: { readonly uses: Uses<S> },
): HttpFunctionOptions;
/** The `app.http` options of an OIP contract's route, running `handler`. */
export function oipRoute<C extends Contract>(contract: C, handler: RouteHandler<C>): HttpFunctionOptions;
export function oipRoute<C extends Contract, S>(
  contract: C,
  handler: RouteHandler<C> | UsingHandler<C, S>,
  options?: { readonly uses: Uses<S> },
): HttpFunctionOptions {
  if (options === undefined) return route(contract, handler as RouteHandler<C>, { errorResponse: oipErrorResponse });
  return route(contract, handler as UsingHandler<C, S>, { uses: options.uses, errorResponse: oipErrorResponse });
}
