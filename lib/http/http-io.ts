import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { AppError, problemHeaders, toAppError, toProblem } from '../errors/errors';
import { parseJson } from '../scoring/event-schema';

const JSON_CT = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Reads a JSON request body with a size cap.
 * @param limitBytes largest accepted body, bytes.
 * @throws AppError `unsupported_media_type` (not JSON), `payload_too_large`, `invalid_json`.
 */
export async function readJsonBody(request: HttpRequest, limitBytes: number): Promise<unknown> {
  const ct = request.headers.get('content-type') ?? '';
  if (!JSON_CT.test(ct)) {
    throw new AppError('unsupported_media_type', 'The body must be JSON (content-type: application/json).');
  }
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limitBytes) {
    throw new AppError('payload_too_large', `The body must be at most ${limitBytes} bytes.`);
  }
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > limitBytes)
    throw new AppError('payload_too_large', `The body must be at most ${limitBytes} bytes.`);
  return parseJson(new TextDecoder('utf-8').decode(bytes));
}

/** A JSON response. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponseInit {
  return {
    status,
    jsonBody: body,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  };
}

/**
 * Maps any thrown value to an `application/problem+json` response. Unexpected errors are logged with
 * their code only (no body, no payment data) and answered with a generic 500.
 */
export function problemResponse(err: unknown, context?: InvocationContext): HttpResponseInit {
  const e = toAppError(err);
  if (e.status >= 500 && context !== undefined) {
    const cause = e.cause instanceof Error ? `${e.cause.name}: ${e.cause.message}` : undefined;
    context.error(`request failed: ${e.code}`, cause ?? '');
  }
  return { status: e.status, jsonBody: toProblem(e, context?.invocationId), headers: problemHeaders(e) };
}

/** Wraps an HTTP handler so that any error becomes a problem response. */
export function withProblems(
  handler: (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>,
): (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit> {
  return async (request, context) => {
    try {
      return await handler(request, context);
    } catch (err) {
      return problemResponse(err, context);
    }
  };
}
