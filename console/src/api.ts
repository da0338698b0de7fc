/** Calls to the service's own API (same origin; Easy Auth's session cookie goes with them in Azure). */
import { API_ROUTES, type ApiRoutes, type FieldError, type Problem, type RouteName } from './api-contract.js';

/** An error answer, with the problem's title and the fields it names. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: readonly FieldError[] = [],
  ) {
    super(message);
  }
}

/** A field a problem names; a ruleset's compile error also names its rule and the column in the expression. */
export type { FieldError };

/** What the console reads of a problem answer (any of it may be missing: a proxy answers with its own page). */
type ProblemFields = Partial<Pick<Problem, 'title' | 'detail' | 'errors'>>;

/** `fetch` of `/api/{path}` as JSON; a 204 is `undefined`; an error answer throws an {@link ApiError}. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const res = await fetch(`/api/${path}`, {
    method: init.method ?? 'GET',
    headers:
      init.body === undefined
        ? { accept: 'application/json' }
        : { 'content-type': 'application/json', accept: 'application/json' },
    body: init.body === undefined ? null : JSON.stringify(init.body),
    credentials: 'same-origin',
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  // an error answer that is not JSON (a proxy's HTML page, say) still becomes an ApiError with its status
  const json: unknown = text === '' ? undefined : res.ok ? JSON.parse(text) : parseOrUndefined(text);
  if (!res.ok) {
    const p = (json ?? {}) as ProblemFields;
    const fields = p.errors ?? [];
    const why = fields.map((f) => `${f.path} ${f.message}`).join('; ');
    throw new ApiError(
      res.status,
      [p.detail ?? p.title ?? `HTTP ${res.status}`, why].filter(Boolean).join(': '),
      fields,
    );
  }
  return json as T;
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A query string of the non-empty values. */
export function query(values: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** What {@link call} sends for a route: its path parameters, query and body, each when the route has them. */
export type CallArgs<N extends RouteName> = ([ApiRoutes[N]['params']] extends [never]
  ? { readonly params?: undefined }
  : { readonly params: ApiRoutes[N]['params'] }) &
  ([ApiRoutes[N]['query']] extends [never]
    ? { readonly query?: undefined }
    : { readonly query?: { readonly [K in keyof ApiRoutes[N]['query']]?: string | undefined } }) &
  ([ApiRoutes[N]['body']] extends [never] ? { readonly body?: undefined } : { readonly body: ApiRoutes[N]['body'] });

/** The path of route `name` under `/api/`, its `{parameters}` filled in (encoded) and its query appended. */
export function pathOf<N extends RouteName>(name: N, args: CallArgs<N>): string {
  const params = (args.params ?? {}) as Readonly<Record<string, string>>;
  const filled = API_ROUTES[name].path.replace(/\{(\w+)\}/g, (_m, k: string) => {
    const v = params[k];
    if (v === undefined) throw new Error(`${name}: no value for {${k}}`);
    return encodeURIComponent(v);
  });
  return `${filled}${query((args.query ?? {}) as Record<string, string | undefined>)}`;
}

/**
 * Calls route `name` (console/src/api-contract.ts: generated from the route contracts) with its method, path, query
 * and body, answering its response type (`undefined` for a 204). @throws ApiError for an error answer.
 */
export function call<N extends RouteName>(
  name: N,
  ...args: object extends CallArgs<N> ? [CallArgs<N>?] : [CallArgs<N>]
): Promise<ApiRoutes[N]['response']> {
  const a = (args[0] ?? {}) as CallArgs<N>;
  const init =
    a.body === undefined ? { method: API_ROUTES[name].method } : { method: API_ROUTES[name].method, body: a.body };
  return api<ApiRoutes[N]['response']>(pathOf(name, a), init);
}
