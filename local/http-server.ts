/**
 * The HTTP server of the local host's front (it runs on the front's own thread, `./http-front-worker`):
 * routes `/{routePrefix}/...` requests to http-triggered functions, applies host.json's HTTP throttles
 * (`./http-throttle`, 429), enforces host.json's `functionTimeout` (`./function-timeout`, 500), converts
 * requests/responses to and from RPC http data, answers errors with `application/problem+json`, and shuts
 * down gracefully (stop accepting, drain in-flight). A request whose client goes away never holds a slot
 * for nothing: waiting, it leaves the throttle's queue; reading its body, it stops; executing, its slot is
 * back when the invocation ends (at the latest at `functionTimeout`) and its answer is dropped.
 *
 * @module
 */
import * as http from 'http';
import type { AddressInfo } from 'net';
import type { RpcHttpData, RpcLogLevel } from './core-types';
import { DEFAULT_FUNCTION_TIMEOUT_MS, FunctionTimeoutError, withFunctionTimeout } from './function-timeout';
import { ClientGoneError, type HttpThrottle, type ThrottleRelease } from './http-throttle';
import type { RouteTable } from './routes';
import { type DecodedHttpResponse, toNodeResponseHeaders, toRpcHttpRequest } from './rpc';

/**
 * Optional handler for extra (non-function) routes, called before function routing.
 * Return `true` if it handled (and will end) the response.
 */
export type ExtraRoutes = (req: http.IncomingMessage, res: http.ServerResponse) => boolean | Promise<boolean>;

/** What a route leads to: a function, by name. */
export interface RouteTarget {
  readonly name: string;
}

/** Options for {@link FunctionsHttpServer.listen}. */
export interface FunctionsHttpServerOptions {
  host: string;
  /** 0 = any free port. */
  port: number;
  /** Route prefix without slashes (`api`); `''` = none. */
  routePrefix: string;
  routes: RouteTable<RouteTarget>;
  /**
   * Runs the function; resolves to its http response (`undefined` if it returned none). `abandoned` aborts
   * when the server stops waiting for the answer (`functionTimeout` passed): the caller may forget the call.
   */
  invokeHttp(fn: RouteTarget, request: RpcHttpData, abandoned: AbortSignal): Promise<DecodedHttpResponse | undefined>;
  extraRoutes?: ExtraRoutes;
  /** Request body cap in bytes; larger bodies get 413. */
  maxBodyBytes: number;
  /** host.json's HTTP throttles for function invocations; none = unbounded. */
  throttle?: HttpThrottle;
  /** host.json `functionTimeout`, ms (`Infinity` = none). Default 30 min, the host's default off Consumption. */
  functionTimeoutMs?: number;
  log(level: RpcLogLevel, message: string): void;
}

/** Thrown by {@link readBody} when the body exceeds the cap. */
export class BodyTooLargeError extends Error {}

/**
 * Reads a request body fully, rejecting with {@link BodyTooLargeError} past `maxBytes`, and with
 * {@link ClientGoneError} when the client goes away before the body is complete (also when it went before the
 * read began: a request that waited for a slot may find its socket closed).
 */
export function readBody(req: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (req.destroyed && !req.readableEnded) {
      reject(new ClientGoneError());
      return;
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      reject(new BodyTooLargeError(`Request body of ${declared} bytes exceeds ${maxBytes} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > maxBytes) {
        failed = true;
        chunks.length = 0;
        reject(new BodyTooLargeError(`Request body exceeds ${maxBytes} bytes`));
      } else chunks.push(chunk);
    });
    let ended = false;
    req.on('end', () => {
      ended = true;
      if (!failed) resolve(Buffer.concat(chunks, size));
    });
    req.on('error', (err) => failed || reject(err));
    req.once('close', () => ended || failed || reject(new ClientGoneError()));
  });
}

/** Sends an RFC 9457 `application/problem+json` response. */
export function sendProblem(
  res: http.ServerResponse,
  status: number,
  detail: string,
  extra: { instance?: string; headers?: http.OutgoingHttpHeaders } = {},
): void {
  const body = JSON.stringify({
    type: 'about:blank',
    title: http.STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    ...(extra.instance ? { instance: extra.instance } : {}),
  });
  res.writeHead(status, {
    ...extra.headers,
    'content-type': 'application/problem+json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function splitPath(pathname: string): string[] {
  const segments = pathname.split('/').slice(1);
  if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop();
  return segments;
}

/** HTTP server dispatching to registered http-triggered functions. */
export class FunctionsHttpServer {
  readonly #opts: FunctionsHttpServerOptions;
  readonly #server: http.Server;
  readonly #prefix: string[];
  #port = 0;
  #inFlight = 0;
  #drainWaiters: (() => void)[] = [];
  #closing: Promise<void> | undefined;

  private constructor(opts: FunctionsHttpServerOptions) {
    this.#opts = opts;
    this.#prefix = splitPath(`/${opts.routePrefix.replace(/^\/+|\/+$/g, '')}`).map((s) => s.toLowerCase());
    this.#server = http.createServer((req, res) => void this.#handle(req, res));
  }

  /** Creates the server and starts listening. */
  static async listen(opts: FunctionsHttpServerOptions): Promise<FunctionsHttpServer> {
    const s = new FunctionsHttpServer(opts);
    await new Promise<void>((resolve, reject) => {
      s.#server.once('error', reject);
      // A deep accept backlog (Node's default is 511): a burst of thousands of new connections is
      // queued by the kernel and answered (200 or 503 from the admission gate), not reset.
      s.#server.listen({ port: opts.port, host: opts.host, backlog: 4096 }, () => {
        s.#server.off('error', reject);
        s.#port = (s.#server.address() as AddressInfo).port;
        resolve();
      });
    });
    return s;
  }

  /** Bound port. */
  get port(): number {
    return this.#port;
  }

  /** Origin, e.g. `http://127.0.0.1:7071` (IPv6 hosts bracketed). */
  get url(): string {
    const host = this.#opts.host.includes(':') ? `[${this.#opts.host}]` : this.#opts.host;
    return `http://${host}:${this.port}`;
  }

  /** Requests currently being handled. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Graceful shutdown: stop accepting connections, let in-flight requests finish (responses
   * carry `Connection: close`), close idle keep-alive sockets; after `timeoutMs`, force-close.
   */
  close(timeoutMs = 10_000): Promise<void> {
    this.#closing ??= (async () => {
      const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
      this.#server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      const drained = this.#inFlight === 0 ? Promise.resolve() : new Promise<void>((r) => this.#drainWaiters.push(r));
      await Promise.race([drained, timeout]);
      this.#server.closeIdleConnections();
      await Promise.race([closed, timeout]);
      clearTimeout(timer);
      this.#server.closeAllConnections();
      await closed;
    })();
    return this.#closing;
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.#inFlight++;
    // the response closes before it is finished only when the client went away
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
      if (--this.#inFlight === 0) this.#drainWaiters.splice(0).forEach((r) => r());
    });
    if (this.#closing) res.setHeader('connection', 'close');
    try {
      if (this.#opts.extraRoutes && (await this.#opts.extraRoutes(req, res))) return;
      await this.#dispatch(req, res, gone.signal);
    } catch (err) {
      if (err instanceof ClientGoneError) return; // no one to answer
      this.#opts.log('error', `Unhandled error for ${req.method} ${req.url}: ${(err as Error)?.stack ?? String(err)}`);
      if (!res.headersSent) sendProblem(res, 500, 'An unexpected error occurred in the local host.');
      else res.destroy();
    }
  }

  async #dispatch(req: http.IncomingMessage, res: http.ServerResponse, gone: AbortSignal): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', `http://${req.headers.host ?? `${this.#opts.host}:${this.port}`}`);
    } catch {
      return sendProblem(res, 400, 'The request URL or Host header is not valid.');
    }
    const instance = url.pathname;
    let path: string[];
    try {
      path = splitPath(url.pathname).map((s) => decodeURIComponent(s));
    } catch {
      return sendProblem(res, 400, 'The request path is not valid percent-encoding.', { instance });
    }
    const underPrefix = this.#prefix.every((p, i) => path[i]?.toLowerCase() === p);
    const match = underPrefix ? this.#opts.routes.match(method, path.slice(this.#prefix.length)) : undefined;
    if (!match || match.kind === 'not-found') {
      return sendProblem(res, 404, `No function matches ${method} ${instance}.`, { instance });
    }
    if (match.kind === 'method-not-allowed') {
      return sendProblem(res, 405, `Method ${method} is not allowed for ${instance}.`, {
        instance,
        headers: { allow: match.allow.join(', ') },
      });
    }
    const throttle = this.#opts.throttle;
    const entered = throttle?.enter(gone);
    if (throttle !== undefined && entered === undefined) {
      // as the Functions host answers its throttle: 429, `X-FUNCTION-SCALEOUT: 1` (a hint to the scale
      // controller), and no body
      res.writeHead(429, { 'x-function-scaleout': '1', 'content-length': 0 });
      res.end();
      return;
    }
    // a client that goes while its request waits leaves the queue (ClientGoneError, caught in #handle); one
    // that goes while the body is read stops the read (readBody); one that goes while its function runs leaves
    // the slot to the invocation, which gives it back when it ends (at the latest at functionTimeout): freeing
    // it earlier would let the app run more than maxConcurrentRequests invocations at once
    const release: ThrottleRelease | undefined = entered === undefined ? undefined : await entered;
    try {
      await this.#invoke(req, res, url, method, match.target, match.params, gone);
    } finally {
      release?.();
    }
  }

  /** Reads the body, invokes the function and writes its response; resolves to the status sent. */
  async #invoke(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    url: URL,
    method: string,
    fn: RouteTarget,
    params: Record<string, string>,
    gone: AbortSignal,
  ): Promise<number | undefined> {
    const instance = url.pathname;
    let body: Buffer;
    try {
      body = await readBody(req, this.#opts.maxBodyBytes);
    } catch (err) {
      if (!(err instanceof BodyTooLargeError)) throw err;
      res.setHeader('connection', 'close');
      sendProblem(res, 413, err.message, { instance });
      return 413;
    }
    const rpcRequest = toRpcHttpRequest({
      method,
      url: url.href,
      headers: req.headers,
      params,
      body,
      searchParams: url.searchParams,
    });
    let response: DecodedHttpResponse | undefined;
    const abandoned = new AbortController();
    const timeoutMs = this.#opts.functionTimeoutMs ?? DEFAULT_FUNCTION_TIMEOUT_MS;
    try {
      const running = this.#opts.invokeHttp(fn, rpcRequest, abandoned.signal);
      response = await withFunctionTimeout(running, fn.name, timeoutMs);
    } catch (err) {
      if (err instanceof FunctionTimeoutError) {
        // as the Functions host: the invocation is failed (logged as the host logs it), the caller gets 500
        abandoned.abort();
        this.#opts.log('error', `${err.message}. The invocation is failed; its answer will be dropped.`);
        sendProblem(res, 500, `The function '${fn.name}' ran past functionTimeout and was failed.`, { instance });
        return 500;
      }
      this.#opts.log('error', `Function '${fn.name}' failed: ${(err as Error)?.stack ?? String(err)}`);
      sendProblem(res, 500, `The function '${fn.name}' failed. See the host log for details.`, { instance });
      return 500;
    }
    if (gone.aborted) return undefined; // the client went away: its answer is dropped
    if (!response) {
      res.writeHead(204);
      res.end();
      return 204;
    }
    res.writeHead(response.status, toNodeResponseHeaders(response));
    res.end(response.body);
    return response.status;
  }
}
