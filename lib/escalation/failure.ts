import {
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  ContentFilterFinishReasonError,
  LengthFinishReasonError,
} from 'openai/error';
import type { EscalationOutcome } from '../scoring/escalation-info';

/** Longest `Retry-After` honoured when it keeps the breaker open, ms (5 minutes). */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Why an escalation produced no usable verdict. Its message is fixed text: never payment or prompt data. */
export class EscalationFailure extends Error {
  constructor(
    readonly outcome: Exclude<EscalationOutcome, 'ok' | 'capped'>,
    message: string,
    readonly extra: {
      /** The server's `Retry-After` (429/503), ms, capped at {@link MAX_RETRY_AFTER_MS}. */
      readonly retryAfterMs?: number;
      readonly tokens?: { readonly prompt: number; readonly completion: number };
      readonly model?: string;
    } = {},
  ) {
    super(message);
    this.name = 'EscalationFailure';
  }
}

/**
 * Reads `retry-after-ms` or `retry-after` (seconds or an HTTP date) from response headers, capped at
 * {@link MAX_RETRY_AFTER_MS}. Undefined when absent or unreadable.
 * @param nowMs wall clock for an HTTP-date value, ms since the epoch.
 */
export function retryAfterMs(headers: Headers | undefined, nowMs: number = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const cap = (ms: number): number | undefined =>
    Number.isFinite(ms) && ms >= 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') return cap(Number(ms));
  const v = headers.get('retry-after');
  if (v === null || v.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return cap(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isFinite(at) ? cap(Math.max(0, at - nowMs)) : undefined;
}

/**
 * Maps whatever the SDK threw to an {@link EscalationFailure}.
 * @param timedOut whether the escalation's own budget expired (then every abort is a timeout).
 */
export function classifyFailure(err: unknown, timedOut: boolean): EscalationFailure {
  if (err instanceof EscalationFailure) return err;
  if (timedOut || err instanceof APIUserAbortError || err instanceof APIConnectionTimeoutError)
    return new EscalationFailure('timeout', 'the escalation budget expired');
  if (err instanceof LengthFinishReasonError)
    return new EscalationFailure('invalid_output', 'the answer was cut (length)');
  if (err instanceof ContentFilterFinishReasonError)
    return new EscalationFailure('refused', 'the answer was filtered (content_filter)');
  if (err instanceof APIError) {
    const status = err.status;
    if (status === 429)
      return new EscalationFailure('rate_limited', 'rate limited (429)', optionalRetry(retryAfterMs(err.headers)));
    if (status !== undefined && status >= 500)
      return new EscalationFailure(
        'server_error',
        `server error (${status})`,
        optionalRetry(retryAfterMs(err.headers)),
      );
    return new EscalationFailure('error', status === undefined ? 'connection failed' : `request failed (${status})`);
  }
  if (err instanceof SyntaxError) return new EscalationFailure('invalid_output', 'the answer is not valid JSON');
  if ((err as { name?: unknown } | null)?.name === 'ZodError')
    return new EscalationFailure('invalid_output', 'the answer violates the verdict schema');
  return new EscalationFailure('error', 'the escalation failed');
}

function optionalRetry(ms: number | undefined): { retryAfterMs?: number } {
  return ms === undefined ? {} : { retryAfterMs: ms };
}
