import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { AppError, problemHeaders, toAppError, toProblem } from '../errors/errors';
import { parseJson } from './parse-json';
import { readBounded } from './bounded-read';

const JSON_CT = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** What {@link readJsonBody} needs of a request: `HttpRequest` (the host's) or a fetch `Request`. */
export type JsonBodySource = Pick<HttpRequest, 'headers' | 'body'>;

/**
 * Reads a JSON request body with a size cap. A declared `content-length` over the cap is refused before
 * reading; otherwise (chunked bodies included) the bytes are counted as they stream in and the read
 * stops, the stream cancelled, as soon as the count passes the cap.
 * @param limitBytes largest accepted body, bytes.
 * @throws AppError `unsupported_media_type` (not JSON), `payload_too_large`, `invalid_json`.
 */
export async function readJsonBody(request: JsonBodySource, limitBytes: number): Promise<unknown> {
  const ct = request.headers.get('content-type') ?? '';
  if (!JSON_CT.test(ct)) {
    throw new AppError('unsupported_media_type', 'The body must be JSON (content-type: application/json).');
  }
  const tooLarge = (): AppError => new AppError('payload_too_large', `The body must be at most ${limitBytes} bytes.`);
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge();
  const body = request.body as AsyncIterable<Uint8Array> | null;
  const { bytes } = body === null ? { bytes: new Uint8Array(0) } : await readBounded(body, limitBytes, tooLarge);
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

/** An HTTP handler of the v4 programming model. */
export type HttpHandler = (request: HttpRequest, context: InvocationContext) => Promise<HttpResponseInit>;

/**
 * Wraps an HTTP handler so that any error becomes a response: a problem document by default, or what
 * `toResponse` makes of it (e.g. the inference protocol's `{ error }` body).
 */
export function withProblems(
  handler: HttpHandler,
  toResponse: (err: unknown, context: InvocationContext) => HttpResponseInit = problemResponse,
): HttpHandler {
  return async (request, context) => {
    try {
      return await handler(request, context);
    } catch (err) {
      return toResponse(err, context);
    }
  };
}
