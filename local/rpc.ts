/**
 * Conversions between plain JS / Node http values and the RPC shapes (`RpcTypedData`,
 * `RpcHttpData`) that the Functions host exchanges with the worker and that
 * `@azure/functions`' `InvocationModel` consumes and produces.
 *
 * @module
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'http';
import type { RpcHttpCookie, RpcHttpData, RpcModelBindingData, RpcTypedData } from './core-types';

/**
 * A trigger value sent as `modelBindingData` (deferred binding, `sdkBinding: true`), as the host does for
 * a blob trigger whose binding declares `supportsDeferredBinding`.
 */
export class DeferredBinding {
  constructor(readonly data: RpcModelBindingData) {}
}

/**
 * Encodes a JS value as RPC typed data, like the library's `toRpcTypedData` (what the host would
 * send): string -> `string`, Buffer/typed array/ArrayBuffer -> `bytes`, integer -> `int`,
 * other number -> `double`, Date -> ISO `string`, anything else -> `json`.
 * `undefined`/`null` -> `undefined` (no data).
 */
export function encodeTypedData(value: unknown): RpcTypedData | undefined {
  if (value === undefined || value === null) return undefined;
  if (value instanceof DeferredBinding) return { modelBindingData: value.data };
  if (typeof value === 'string') return { string: value };
  if (Buffer.isBuffer(value)) return { bytes: value };
  if (ArrayBuffer.isView(value)) return { bytes: new Uint8Array(value.buffer, value.byteOffset, value.byteLength) };
  if (value instanceof ArrayBuffer) return { bytes: new Uint8Array(value) };
  if (typeof value === 'number') return Number.isInteger(value) ? { int: value } : { double: value };
  if (value instanceof Date) return { string: value.toISOString() };
  return { json: JSON.stringify(value) };
}

/**
 * Encodes a batch trigger value (`cardinality: 'many'`) as the host sends a batch to a worker with the
 * `TypedDataCollection` capability: all Buffers -> `collectionBytes`, otherwise `collectionString` (strings
 * as they are, other values as JSON text; the library JSON-parses each string it can).
 */
export function encodeCollection(values: readonly unknown[]): RpcTypedData {
  if (values.length > 0 && values.every((v) => Buffer.isBuffer(v)))
    return { collectionBytes: { bytes: values as Buffer[] } };
  return {
    collectionString: { string: values.map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? 'null'))) },
  };
}

/** A decoded http response (an RPC http data converted to friendlier types). */
export interface DecodedHttpResponse {
  status: number;
  headers: Record<string, string>;
  cookies: string[];
  body: Buffer;
}

/**
 * Decodes RPC typed data coming back from the library (return value / output bindings):
 * `json` -> parsed value, `string` -> string (not JSON-parsed), `bytes`/`stream` -> Buffer,
 * `int`/`double` -> number, collections -> arrays, `http` -> {@link DecodedHttpResponse}.
 */
export function decodeTypedData(data: RpcTypedData | null | undefined): unknown {
  if (!data) return undefined;
  if (data.json !== undefined && data.json !== null) return JSON.parse(data.json) as unknown;
  if (data.string !== undefined && data.string !== null) return data.string;
  if (data.bytes !== undefined && data.bytes !== null) return Buffer.from(data.bytes);
  if (data.stream !== undefined && data.stream !== null) return Buffer.from(data.stream);
  if (data.http) return decodeHttpResponse(data.http);
  if (data.int !== undefined && data.int !== null) return Number(data.int);
  if (data.double !== undefined && data.double !== null) return data.double;
  if (data.collectionBytes?.bytes) return data.collectionBytes.bytes.map((b) => Buffer.from(b));
  if (data.collectionString?.string) return [...data.collectionString.string];
  if (data.collectionDouble?.double) return [...data.collectionDouble.double];
  if (data.collectionSint64?.sint64) return data.collectionSint64.sint64.map(Number);
  return undefined;
}

/** Body of an RPC http message as bytes (`bytes` or `string`, UTF-8). */
export function rpcBodyToBuffer(body: RpcTypedData | null | undefined): Buffer {
  if (!body) return Buffer.alloc(0);
  if (body.bytes) return Buffer.from(body.bytes.buffer, body.bytes.byteOffset, body.bytes.byteLength);
  if (typeof body.string === 'string') return Buffer.from(body.string, 'utf8');
  if (typeof body.json === 'string') return Buffer.from(body.json, 'utf8');
  return Buffer.alloc(0);
}

/** Converts an RPC http response (`{ statusCode, headers, cookies, body }`) to {@link DecodedHttpResponse}. */
export function decodeHttpResponse(http: RpcHttpData): DecodedHttpResponse {
  const status = http.statusCode ? Number.parseInt(http.statusCode, 10) : 200;
  return {
    status: Number.isFinite(status) && status >= 100 && status <= 999 ? status : 200,
    headers: { ...(http.headers ?? {}) },
    cookies: (http.cookies ?? []).map(serializeRpcCookie),
    body: rpcBodyToBuffer(http.body),
  };
}

/** Serialises an RPC cookie into a `Set-Cookie` header value (RFC 6265). */
export function serializeRpcCookie(c: RpcHttpCookie): string {
  const parts = [`${c.name ?? ''}=${encodeURIComponent(c.value ?? '')}`];
  if (c.domain?.value) parts.push(`Domain=${c.domain.value}`);
  if (c.path?.value) parts.push(`Path=${c.path.value}`);
  const seconds = c.expires?.value?.seconds;
  if (seconds !== undefined && seconds !== null)
    parts.push(`Expires=${new Date(Number(seconds) * 1000).toUTCString()}`);
  const maxAge = c.maxAge?.value;
  if (maxAge !== undefined && maxAge !== null) parts.push(`Max-Age=${Math.trunc(maxAge)}`);
  if (c.secure?.value) parts.push('Secure');
  if (c.httpOnly?.value) parts.push('HttpOnly');
  // RPC 'none' means "not specified"; 'explicitNone' is SameSite=None.
  if (c.sameSite === 'lax') parts.push('SameSite=Lax');
  else if (c.sameSite === 'strict') parts.push('SameSite=Strict');
  else if (c.sameSite === 'explicitNone') parts.push('SameSite=None');
  return parts.join('; ');
}

/** Input for {@link toRpcHttpRequest}. */
export interface HttpRequestParts {
  method: string;
  /** Absolute URL, e.g. `http://127.0.0.1:7071/api/echo?x=1`. */
  url: string;
  headers: IncomingHttpHeaders;
  /** Route parameters (already URL-decoded). */
  params: Record<string, string>;
  body: Buffer;
  /** The URL's query, when the caller already parsed the URL (saves parsing it again). */
  searchParams?: URLSearchParams;
}

/**
 * Builds the RPC http request data the host would send for an http trigger. Multi-valued
 * headers/query keys are joined with `,`/`, ` (the host sends one string per key); empty-valued
 * headers are omitted (`IgnoreEmptyValuedRpcHttpHeaders`). The body is sent as `bytes`, which
 * the library's `HttpRequest` turns into a native `Request` body.
 */
export function toRpcHttpRequest(parts: HttpRequestParts): RpcHttpData {
  const headers: Record<string, string> = {};
  for (const key in parts.headers) {
    const value = parts.headers[key];
    const v = Array.isArray(value) ? value.join(', ') : value;
    if (v !== undefined && v !== '') headers[key] = v;
  }
  const query: Record<string, string> = {};
  const search = parts.searchParams ?? new URL(parts.url).searchParams;
  if (search.size > 0) {
    for (const [key, value] of search) query[key] = key in query ? `${query[key]},${value}` : value;
  }
  const http: RpcHttpData = {
    method: parts.method,
    url: parts.url,
    headers,
    query,
    params: parts.params,
  };
  if (parts.body.length > 0) http.body = { bytes: parts.body };
  return http;
}

/**
 * Trigger metadata the host sends alongside an http trigger (`Headers`, `Query`, route params).
 * `@azure/functions` ignores it unless http streaming is on, but it is sent for fidelity.
 */
export function httpTriggerMetadata(http: RpcHttpData): Record<string, RpcTypedData> {
  const md: Record<string, RpcTypedData> = {
    Headers: { json: JSON.stringify(http.headers ?? {}) },
    Query: { json: JSON.stringify(http.query ?? {}) },
  };
  for (const [k, v] of Object.entries(http.params ?? {})) md[k] = { string: v };
  return md;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'content-length',
]);

/**
 * Turns a decoded http response into Node response headers: hop-by-hop headers and
 * `content-length` are dropped (Node recomputes them), cookies become `Set-Cookie` entries.
 */
export function toNodeResponseHeaders(res: DecodedHttpResponse): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const setCookie: string[] = [];
  for (const [key, value] of Object.entries(res.headers)) {
    const lower = key.toLowerCase();
    if (HOP_BY_HOP.has(lower)) continue;
    if (lower === 'set-cookie') setCookie.push(value);
    else out[lower] = value;
  }
  setCookie.push(...res.cookies);
  if (setCookie.length > 0) out['set-cookie'] = setCookie;
  return out;
}
