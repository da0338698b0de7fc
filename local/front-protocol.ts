/**
 * Messages between the local host's HTTP front (its own thread) and the app thread, the way the Functions
 * host and the Node worker talk over gRPC: the front sends invocation requests, the app answers with
 * invocation responses. Requests for paths that are not functions (the embedded Service Bus's `/local/...`)
 * go to the app's extra routes the same way.
 * @module
 */
import { Readable } from 'node:stream';
import type * as http from 'node:http';
import type { RpcHttpData, RpcLogLevel } from './core-types';
import type { HttpThrottleOptions } from './http-throttle';
import type { DecodedHttpResponse } from './rpc';

/** What the front thread starts with. */
export interface FrontSettings {
  readonly host: string;
  readonly port: number;
  readonly routePrefix: string;
  readonly routes: readonly { readonly name: string; readonly route: string; readonly methods: readonly string[] }[];
  readonly maxBodyBytes: number;
  readonly throttles: HttpThrottleOptions;
  /** host.json `functionTimeout`, ms (`Infinity` = none). */
  readonly functionTimeoutMs: number;
  /** Whether the app has extra (non-function) routes. */
  readonly extraRoutes: boolean;
}

/** A plain HTTP response (an extra route's). */
export interface PlainResponse {
  readonly status: number;
  readonly headers: http.OutgoingHttpHeaders;
  readonly body: Uint8Array;
}

/** Front → app. */
export type FrontMessage =
  | { readonly t: 'listening'; readonly port: number }
  | { readonly t: 'invoke'; readonly id: number; readonly name: string; readonly http: RpcHttpData }
  | {
      readonly t: 'extra';
      readonly id: number;
      readonly method: string;
      readonly url: string;
      readonly headers: http.IncomingHttpHeaders;
      readonly body: Uint8Array;
    }
  | { readonly t: 'log'; readonly level: RpcLogLevel; readonly message: string }
  | { readonly t: 'closed' }
  | { readonly t: 'failed'; readonly message: string };

/** App → front. */
export type AppMessage =
  | { readonly t: 'response'; readonly id: number; readonly response: DecodedHttpResponse | undefined }
  | { readonly t: 'error'; readonly id: number; readonly message: string }
  | { readonly t: 'extra'; readonly id: number; readonly response: PlainResponse | undefined }
  | { readonly t: 'close'; readonly timeoutMs: number };

/**
 * Runs an extra-routes handler (written against Node's `IncomingMessage` / `ServerResponse`) on a request
 * the front forwarded: a readable request carrying the body, and a response that records what is written.
 * @returns the response, or `undefined` when the handler did not take the request.
 */
export async function runExtraRoute(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => boolean | Promise<boolean>,
  m: { method: string; url: string; headers: http.IncomingHttpHeaders; body: Uint8Array },
): Promise<PlainResponse | undefined> {
  const req = Object.assign(Readable.from(m.body.length > 0 ? [Buffer.from(m.body)] : []), {
    method: m.method,
    url: m.url,
    headers: m.headers,
  });
  const res = new RecordedResponse();
  const handled = await handler(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse);
  if (!handled) return undefined;
  return res.finished;
}

/** The part of `ServerResponse` the extra routes use, recorded. */
class RecordedResponse {
  statusCode = 200;
  headersSent = false;
  readonly #headers: http.OutgoingHttpHeaders = {};
  readonly #chunks: Buffer[] = [];
  #done: (r: PlainResponse) => void = () => undefined;
  readonly finished = new Promise<PlainResponse>((resolve) => (this.#done = resolve));

  setHeader(name: string, value: number | string | string[]): this {
    this.#headers[name.toLowerCase()] = value;
    return this;
  }
  getHeader(name: string): number | string | string[] | undefined {
    return this.#headers[name.toLowerCase()];
  }
  writeHead(status: number, headers: http.OutgoingHttpHeaders = {}): this {
    this.statusCode = status;
    for (const [k, v] of Object.entries(headers)) if (v !== undefined) this.#headers[k.toLowerCase()] = v;
    this.headersSent = true;
    return this;
  }
  write(chunk: string | Uint8Array): boolean {
    this.headersSent = true;
    this.#chunks.push(Buffer.from(chunk));
    return true;
  }
  end(chunk?: string | Uint8Array): this {
    if (chunk !== undefined) this.write(chunk);
    this.headersSent = true;
    this.#done({ status: this.statusCode, headers: this.#headers, body: Buffer.concat(this.#chunks) });
    return this;
  }
  once(): this {
    return this;
  }
  on(): this {
    return this;
  }
}
