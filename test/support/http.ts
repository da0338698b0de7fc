/** The tests' one HTTP client: `http(base).get/post/put/patch/delete/request`, each answer read whole. */
import * as nodeHttp from 'node:http';

/** An HTTP answer, read whole. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** The `content-type` header ('' when none). */
  readonly type: string;
  /** The body as text. */
  readonly text: string;
  /** The body parsed as JSON (`{}` when empty): an answer whose body is not JSON rejects, naming its status. */
  readonly json: Record<string, unknown>;
}

/** Options of one request. */
export interface HttpOptions {
  /** Headers over the default `content-type: application/json` (sent only with a body). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Bound of the wait for the whole answer, ms (default 30 s): a hung request rejects, naming the bound. */
  readonly timeoutMs?: number;
  /** A fresh connection for this request (no keep-alive, so no reuse race between bursts). */
  readonly fresh?: boolean;
  /**
   * The body, sent in these chunks with `Transfer-Encoding: chunked` (no content-length) on a fresh connection;
   * the `body` argument is then ignored.
   */
  readonly chunks?: readonly Uint8Array[];
}

/** A client on a base URL (`''`: each path is a whole URL). */
export interface HttpClient {
  get(path: string, options?: HttpOptions): Promise<HttpAnswer>;
  delete(path: string, options?: HttpOptions): Promise<HttpAnswer>;
  /** `body`: a string is sent as it is, anything else as JSON. */
  post(path: string, body?: unknown, options?: HttpOptions): Promise<HttpAnswer>;
  put(path: string, body?: unknown, options?: HttpOptions): Promise<HttpAnswer>;
  patch(path: string, body?: unknown, options?: HttpOptions): Promise<HttpAnswer>;
  request(method: string, path: string, body?: unknown, options?: HttpOptions): Promise<HttpAnswer>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** The client on `base` (joined to each path as text: `http('http://h/api').get('/cases')`). */
export function http(base = ''): HttpClient {
  const request = (method: string, path: string, body?: unknown, options: HttpOptions = {}): Promise<HttpAnswer> =>
    send(method, `${base}${path}`, body, options);
  return {
    request,
    get: (path, options) => request('GET', path, undefined, options),
    delete: (path, options) => request('DELETE', path, undefined, options),
    post: (path, body, options) => request('POST', path, body, options),
    put: (path, body, options) => request('PUT', path, body, options),
    patch: (path, body, options) => request('PATCH', path, body, options),
  };
}

async function send(method: string, url: string, body: unknown, options: HttpOptions): Promise<HttpAnswer> {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const withBody = text !== undefined || options.chunks !== undefined;
  const headers = { ...(withBody ? { 'content-type': 'application/json' } : {}), ...options.headers };
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (options.chunks !== undefined) return fresh(method, url, { chunks: options.chunks }, headers, timeoutMs);
  if (options.fresh === true) return fresh(method, url, { text }, headers, timeoutMs);
  const res = await fetch(url, {
    method,
    headers,
    ...(text === undefined ? {} : { body: text }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return answer(res.status, res.headers, await res.text());
}

/**
 * One request on a connection of its own (node:http, `agent: false`): `text` whole (with its content-length), or
 * `chunks` written one by one (chunked transfer encoding; rejects if a content-length was set).
 */
function fresh(
  method: string,
  url: string,
  body: { readonly text?: string | undefined; readonly chunks?: readonly Uint8Array[] },
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = nodeHttp.request(url, { method, agent: false, headers, timeout: timeoutMs }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (v !== undefined) for (const one of Array.isArray(v) ? v : [v]) h.append(k, one);
        }
        try {
          resolve(answer(res.statusCode ?? 0, h, Buffer.concat(parts).toString('utf8')));
        } catch (err) {
          reject(err as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    if (body.chunks === undefined) {
      req.end(body.text);
      return;
    }
    for (const c of body.chunks) req.write(c);
    if (req.getHeader('content-length') !== undefined) req.destroy(new Error('a chunked body with a content-length'));
    else req.end();
  });
}

function answer(status: number, headers: Headers, text: string): HttpAnswer {
  let json: Record<string, unknown>;
  try {
    json = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    throw new Error(`the ${status} answer's body is not JSON: ${text.slice(0, 200)}`);
  }
  return { status, headers, type: headers.get('content-type') ?? '', text, json };
}
