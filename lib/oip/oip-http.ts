/**
 * HTTP mapping of the Open Inference Protocol endpoints: every error is the protocol's
 * `{ "error": "<message>" }` with `content-type: application/json` (not problem+json), with the status of
 * its stable code (`lib/errors/errors.ts`) and `Retry-After` where the code has one.
 */
import type { HttpResponseInit, InvocationContext } from '@azure/functions';
import { toAppError } from '../errors/errors';
import { jsonResponse, withProblems, type HttpHandler } from '../http/http-io';
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

/** A readiness answer: 200 with `body` when ready; else 400 `{ error: reason }` (the protocol: a 4xx status means false). */
export function readyResponse(r: ReadyAnswer, body: Record<string, unknown>): HttpResponseInit {
  return r.ready ? jsonResponse(200, { ...body, ready: true }) : jsonResponse(400, { error: r.reason });
}

/** Wraps a handler so that any error becomes an {@link oipErrorResponse}. */
export function withOipErrors(handler: HttpHandler): HttpHandler {
  return withProblems(handler, oipErrorResponse);
}
