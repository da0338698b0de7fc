/**
 * The body of `POST /api/score/batch`: `{ "events": [...] }`, checked before any event is validated, and the
 * shape of one entry of its answer.
 */
import { AppError, toProblem, type FieldError, type Problem } from '../errors/errors';
import { parsePaymentEvent, type PaymentEvent } from '../domain/payment-event';
import type { ScoreResult } from './scorer';

/** One entry of a batch response: a score result, or the problem of an invalid event. */
export type BatchItemResult = ScoreResult | { readonly transactionId?: string; readonly error: Problem };

/**
 * The `events` array of a batch body (at most `maxEvents`).
 * @throws AppError `validation_failed` / `payload_too_large`. */
export function batchItems(body: unknown, maxEvents: number): unknown[] {
  const errors: FieldError[] = [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    errors.push({ path: '', message: 'must be an object like { "events": [...] }' });
  } else {
    for (const key of Object.keys(body)) if (key !== 'events') errors.push({ path: key, message: 'unknown field' });
    const events = (body as { events?: unknown }).events;
    if (events === undefined) errors.push({ path: 'events', message: 'is required' });
    else if (!Array.isArray(events)) errors.push({ path: 'events', message: 'must be an array of payment events' });
    else if (events.length === 0) errors.push({ path: 'events', message: 'must contain at least 1 event' });
    else if (events.length > maxEvents) {
      throw new AppError('payload_too_large', `A batch holds at most ${maxEvents} events.`, {
        errors: [{ path: 'events', message: `must contain at most ${maxEvents} events` }],
      });
    }
    if (errors.length === 0) return events as unknown[];
  }
  throw new AppError('validation_failed', `${errors.length} invalid field(s).`, { errors });
}

/** A batch's events sorted out: the valid ones with their places, and a result slot per event. */
export interface SortedBatch {
  /** One per event; an invalid event's problem is already in its place, the valid ones' are empty. */
  readonly results: BatchItemResult[];
  readonly valid: PaymentEvent[];
  /** Where each valid event's result goes in `results`. */
  readonly at: number[];
}

/** Validates each event of a batch (`events.<i>` paths): an invalid one gets its own problem, the rest go on. */
export function sortBatch(items: readonly unknown[]): SortedBatch {
  const sorted: SortedBatch = { results: new Array<BatchItemResult>(items.length), valid: [], at: [] };
  items.forEach((item, i) => {
    try {
      sorted.valid.push(parsePaymentEvent(item, `events.${i}`));
      sorted.at.push(i);
    } catch (err) {
      const id = (item as { transactionId?: unknown } | null)?.transactionId;
      sorted.results[i] = {
        ...(typeof id === 'string' && id.length > 0 && id.length <= 128 ? { transactionId: id } : {}),
        error: toProblem(err),
      };
    }
  });
  return sorted;
}
