/**
 * One attempt of a webhook delivery: `POST` of the payload with its Standard Webhooks headers, ended after a timeout
 * (an `AbortSignal` fired by the injected timers). A 2xx answer is a delivery; anything else (another status, a
 * redirect, which is not followed, a network error, the timeout) is a failed attempt. The answer's body is not read.
 * @module
 */
import type { Timers } from '../platform/timers';
import type { SignedHeaders } from './webhook-signing';

/** The `fetch` the sender calls (the global one by default; tests may pass their own). */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** An attempt's outcome: delivered (2xx), or the failure's name (`http_<status>`, `timeout`, the error's name). */
export type AttemptOutcome =
  | { readonly ok: true; readonly status: number }
  | { readonly ok: false; readonly error: string; readonly status?: number };

/** The longest timeout an attempt may be given, ms. */
export const MAX_ATTEMPT_TIMEOUT_MS = 30_000;

/** Options of {@link sendWebhook}. */
export interface SendOptions {
  readonly fetch: Fetch;
  readonly timers: Timers;
  /** The attempt's timeout, ms (capped at {@link MAX_ATTEMPT_TIMEOUT_MS}). */
  readonly timeoutMs: number;
}

/** Sends one attempt; never throws. */
export async function sendWebhook(
  url: string,
  headers: SignedHeaders,
  payload: string,
  o: SendOptions,
): Promise<AttemptOutcome> {
  const abort = new AbortController();
  let timedOut = false;
  const handle = o.timers.setTimeout(
    () => {
      timedOut = true;
      abort.abort();
    },
    Math.min(o.timeoutMs, MAX_ATTEMPT_TIMEOUT_MS),
  );
  try {
    const res = await o.fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'fraud-decision-webhooks/1' },
      body: payload,
      redirect: 'manual',
      signal: abort.signal,
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    return { ok: false, error: `http_${res.status}`, status: res.status };
  } catch (err) {
    if (timedOut) return { ok: false, error: 'timeout' };
    return { ok: false, error: networkErrorName(err) };
  } finally {
    o.timers.clearTimeout(handle);
  }
}

/** The name of a network error (its cause's code, such as `ECONNREFUSED`), never its message (it holds the url). */
function networkErrorName(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  if (cause !== undefined && typeof cause.code === 'string') return cause.code;
  return err instanceof Error ? err.name : 'error';
}
