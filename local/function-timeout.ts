/**
 * host.json `functionTimeout`, enforced as the Functions host enforces it: an invocation still running when
 * the timeout passes is failed (the host logs `Timeout value of 00:05:00 exceeded by function 'Functions.X'`
 * and answers an HTTP trigger 500), and whatever it held (an HTTP execution slot, a Service Bus call slot) is
 * given back. The host cannot stop the JavaScript that is still running: in Azure it then restarts the
 * worker; here the invocation's promise is left to settle on its own and its result is dropped.
 * @module
 */

/** The Functions host's default `functionTimeout` on dedicated and Premium plans: 30 minutes. */
export const DEFAULT_FUNCTION_TIMEOUT_MS = 30 * 60_000;

/** Thrown (rejected with) when an invocation runs past `functionTimeout`. */
export class FunctionTimeoutError extends Error {
  constructor(
    readonly functionName: string,
    readonly timeoutMs: number,
  ) {
    super(`Timeout value of ${formatTimeSpan(timeoutMs)} exceeded by function 'Functions.${functionName}'`);
    this.name = 'FunctionTimeoutError';
  }
}

const TIME_SPAN = /^(?:(\d+)\.)?(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,7}))?$/;

/**
 * Parses a .NET TimeSpan as host.json writes it (`[d.]hh:mm:ss[.fffffff]`, e.g. `00:05:00`) into ms.
 * `-1` (unbounded, allowed on dedicated plans) is `Infinity`.
 * @throws Error naming `functionTimeout` for anything else (the Functions host does not start either).
 */
export function parseFunctionTimeout(value: string | number): number {
  if (value === -1 || value === '-1') return Number.POSITIVE_INFINITY;
  const m = typeof value === 'string' ? TIME_SPAN.exec(value.trim()) : null;
  if (m === null) throw new Error(`host.json functionTimeout must be a time span like "00:05:00": ${String(value)}`);
  const [, days = '0', h = '0', min = '0', s = '0', fraction = ''] = m;
  const ms =
    ((Number(days) * 24 + Number(h)) * 60 + Number(min)) * 60_000 +
    Number(s) * 1000 +
    Math.round(Number(`0.${fraction || '0'}`) * 1000);
  if (Number(min) > 59 || Number(s) > 59 || ms <= 0)
    throw new Error(`host.json functionTimeout must be a positive time span like "00:05:00": ${String(value)}`);
  return ms;
}

/** `hh:mm:ss` (with `.fff` when there are ms), as the host prints the timeout. */
export function formatTimeSpan(ms: number): string {
  if (!Number.isFinite(ms)) return '-1';
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  const total = Math.floor(ms / 1000);
  const rest = ms - total * 1000;
  const hms = `${pad(Math.floor(total / 3600))}:${pad(Math.floor(total / 60) % 60)}:${pad(total % 60)}`;
  return rest > 0 ? `${hms}.${pad(Math.round(rest), 3)}` : hms;
}

/**
 * Settles like `running`, or rejects with {@link FunctionTimeoutError} once `timeoutMs` has passed first.
 * `Infinity` = no timeout. The timer never keeps the process alive.
 */
export function withFunctionTimeout<T>(running: Promise<T>, functionName: string, timeoutMs: number): Promise<T> {
  if (!Number.isFinite(timeoutMs)) return running;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FunctionTimeoutError(functionName, timeoutMs)), timeoutMs);
    timer.unref();
  });
  return Promise.race([running, timedOut]).finally(() => clearTimeout(timer));
}
