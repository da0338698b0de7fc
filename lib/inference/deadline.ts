import { AppError } from '../errors/errors';

/** Request header that overrides the inference deadline for one request, in ms (clamped to the configured maximum). */
export const DEADLINE_HEADER = 'x-deadline-ms';

/**
 * The inference deadline of one request, ms from now.
 * @param header the `x-deadline-ms` header value, if sent: a positive number of ms.
 * @param limits `deadlineMs` (default, `REQUEST_DEADLINE_MS`, 1000) and `deadlineMaxMs` (cap, `REQUEST_DEADLINE_MAX_MS`, 2000).
 * @returns the header's value clamped to `deadlineMaxMs`, or `deadlineMs` without a header.
 * @throws AppError `validation_failed` (path `headers.x-deadline-ms`) when the header is not a positive number.
 */
export function resolveDeadlineMs(
  header: string | null | undefined,
  limits: { readonly deadlineMs: number; readonly deadlineMaxMs: number },
): number {
  if (header === null || header === undefined || header.trim() === '') return limits.deadlineMs;
  const ms = Number(header.trim());
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new AppError('validation_failed', '1 invalid field(s).', {
      errors: [{ path: `headers.${DEADLINE_HEADER}`, message: 'must be a positive number of milliseconds' }],
    });
  }
  return Math.min(ms, limits.deadlineMaxMs);
}

/**
 * The default deadline of a batch request of `events` valid events, ms: `deadlineMs` plus
 * `batchDeadlinePerEventMs` (`BATCH_DEADLINE_PER_EVENT_MS`, 2) for every event after the first,
 * capped at `deadlineMaxMs`. (An `x-deadline-ms` header replaces it: the caller's deadline is kept.)
 */
export function batchDeadlineMs(
  events: number,
  limits: { readonly deadlineMs: number; readonly deadlineMaxMs: number; readonly batchDeadlinePerEventMs: number },
): number {
  const extra = Math.max(0, Math.floor(events) - 1) * limits.batchDeadlinePerEventMs;
  return Math.min(limits.deadlineMaxMs, Math.max(limits.deadlineMs, limits.deadlineMs + extra));
}

/** The `x-deadline-ms` header's deadline, ms, or `undefined` without one. @throws like {@link resolveDeadlineMs}. */
export function headerDeadlineMs(
  header: string | null | undefined,
  limits: { readonly deadlineMs: number; readonly deadlineMaxMs: number },
): number | undefined {
  return header === null || header === undefined || header.trim() === ''
    ? undefined
    : resolveDeadlineMs(header, limits);
}
