/**
 * The first step of asynchronous scoring: decode and validate each message of a delivery batch. Messages
 * that can never be scored become rejections; a transaction repeated within the batch is kept once.
 */
import { toAppError, toProblem, type AppError, type FieldError } from '../errors/errors';
import { parsePaymentEvent, type PaymentEvent } from '../domain/payment-event';
import { bodyText, decodeBody } from './message-body';

/** Trigger metadata of a Service Bus message that the scorer uses. */
export interface MessageMeta {
  readonly messageId?: string;
  readonly deliveryCount?: number;
  readonly enqueuedTimeUtc?: string;
  readonly correlationId?: string;
  readonly applicationProperties?: Readonly<Record<string, unknown>>;
}

/** A message that can never be scored: sent to the rejected queue with the reason and the original body. */
export interface RejectedMessage {
  readonly reason: 'invalid_json' | 'validation_failed';
  readonly detail: string;
  readonly errors: readonly FieldError[];
  /** The original message body, as text. */
  readonly originalBody: string;
  readonly messageId?: string;
  readonly correlationId?: string;
  readonly deliveryCount?: number;
  readonly rejectedAt: string;
}

/** One message of a delivery batch: its body and its trigger metadata. */
export interface QueueMessage {
  readonly body: unknown;
  readonly meta: MessageMeta;
}

/** A delivery batch after validation; every map is keyed by the message's index in the batch. */
export interface ValidatedBatch {
  /** The first message of each transaction → its event. */
  readonly events: Map<number, PaymentEvent>;
  /** `[index, index of the first message of the same transaction]` for each repeat. */
  readonly repeats: [number, number][];
  /** Messages that can never be scored (`invalid_json`, `validation_failed`). */
  readonly rejected: Map<number, RejectedMessage>;
  /** Messages whose validation failed with any other error. */
  readonly failures: Map<number, unknown>;
}

/**
 * Decodes and validates every message of a batch (synchronous: no I/O).
 * @param now wall clock for `rejectedAt`, ms since the epoch.
 */
export function validateBatch(messages: readonly QueueMessage[], now: () => number): ValidatedBatch {
  const out: ValidatedBatch = { events: new Map(), repeats: [], rejected: new Map(), failures: new Map() };
  const firstOf = new Map<string, number>();
  messages.forEach((m, i) => {
    let event: PaymentEvent;
    try {
      event = parsePaymentEvent(decodeBody(m.body));
    } catch (err) {
      const e = toAppError(err);
      if (e.code === 'invalid_json' || e.code === 'validation_failed')
        out.rejected.set(i, rejection(e, m.body, m.meta, now));
      else out.failures.set(i, e);
      return;
    }
    const first = firstOf.get(event.transactionId);
    if (first !== undefined) return void out.repeats.push([i, first]);
    firstOf.set(event.transactionId, i);
    out.events.set(i, event);
  });
  return out;
}

function rejection(e: AppError, message: unknown, meta: MessageMeta, now: () => number): RejectedMessage {
  const problem = toProblem(e);
  return {
    reason: e.code === 'invalid_json' ? 'invalid_json' : 'validation_failed',
    detail: problem.detail,
    errors: problem.errors ?? [],
    originalBody: bodyText(message),
    ...(meta.messageId === undefined ? {} : { messageId: String(meta.messageId) }),
    ...(meta.correlationId === undefined ? {} : { correlationId: meta.correlationId }),
    ...(meta.deliveryCount === undefined ? {} : { deliveryCount: meta.deliveryCount }),
    rejectedAt: new Date(now()).toISOString(),
  };
}
