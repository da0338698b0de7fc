/** Calls to the service's own API (same origin; Easy Auth's session cookie goes with them in Azure). */

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
export interface FieldError {
  path: string;
  message: string;
  rule?: string;
  column?: number;
}

interface Problem {
  title?: string;
  detail?: string;
  errors?: FieldError[];
}

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
    const p = (json ?? {}) as Problem;
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
