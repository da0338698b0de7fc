import { AppError, toAppError, toProblem, type FieldError } from '../errors/errors';
import type { SessionManager } from '../inference/session-manager';
import { parsePaymentEvent, type PaymentEvent } from '../scoring/event-schema';
import type { Scorer } from '../scoring/scorer';
import type { ResultPublisher } from './result-publisher';
import type { AsyncScoreResult, ResultStore } from './result-store';
import type { TransactionGuard } from './transaction-guard';

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

/**
 * What processing one message produced: `scored` (published now; `replayed` if the stored result was
 * re-published rather than scored), `duplicate`, or `rejected`.
 */
export type MessageOutcome =
  | { readonly kind: 'scored'; readonly result: AsyncScoreResult; readonly replayed: boolean }
  /** The transaction's result was already published (confirmed and recorded): nothing was sent. */
  | { readonly kind: 'duplicate'; readonly transactionId: string }
  | { readonly kind: 'rejected'; readonly rejection: RejectedMessage };

/** Dependencies of {@link AsyncScorer}. */
export interface AsyncScorerDeps {
  readonly scorer: Scorer;
  readonly sessions: SessionManager;
  readonly store: ResultStore;
  readonly guard: TransactionGuard;
  readonly publisher: ResultPublisher;
  /** Wall clock for `scoredAt`/`rejectedAt`, ms since the epoch. Default `Date.now`. */
  readonly now?: () => number;
}

function bodyText(message: unknown): string {
  if (Buffer.isBuffer(message)) return message.toString('utf8');
  if (typeof message === 'string') return message;
  return JSON.stringify(message) ?? String(message);
}

function decode(message: unknown): unknown {
  if (Buffer.isBuffer(message) || typeof message === 'string') {
    try {
      return JSON.parse(bodyText(message)) as unknown;
    } catch {
      throw new AppError('invalid_json', 'The message body is not valid JSON.', {
        transient: false,
        errors: [{ path: '', message: 'malformed JSON' }],
      });
    }
  }
  return message;
}

/**
 * Scores payment events from a queue and publishes exactly one `risk-completed` per transaction for the
 * whole idempotency TTL, under at-least-once delivery and across instances (README, "Exactly once"):
 * - a confirmed publish is recorded in the store and never repeated (fast path, no lock);
 * - otherwise, holding the transaction's lock: the stored result is re-published (never a new score), or
 *   the event is scored, stored (first writer wins), published with message id = transactionId, and marked;
 * - the only gap (published, then a crash before the mark) re-publishes the same message id and body, which
 *   the topic's duplicate detection drops: its window is at least the store's TTL (config check).
 * Invalid messages become rejections (never retried); transient failures throw so the message is redelivered.
 */
export class AsyncScorer {
  private readonly now: () => number;
  constructor(private readonly deps: AsyncScorerDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Processes one message body with its trigger metadata. Throws only transient errors. */
  async process(message: unknown, meta: MessageMeta): Promise<MessageOutcome> {
    let event: PaymentEvent;
    try {
      event = parsePaymentEvent(decode(message));
    } catch (err) {
      const e = toAppError(err);
      if (e.code !== 'invalid_json' && e.code !== 'validation_failed') throw e;
      return { kind: 'rejected', rejection: this.rejection(e, message, meta) };
    }
    const { store, guard } = this.deps;
    const tx = event.transactionId;
    const seen = await store.lookup(tx);
    if (seen.published) return { kind: 'duplicate', transactionId: tx };
    return guard.run(tx, async (lost) => {
      const again = await store.lookup(tx); // another instance may have finished while we waited
      if (again.published) return { kind: 'duplicate', transactionId: tx } as const;
      let result = again.result;
      let replayed = result !== undefined;
      if (result === undefined) {
        await this.deps.sessions.ensureReady();
        const scored = await this.deps.scorer.score(event);
        const fresh: AsyncScoreResult = {
          ...scored,
          ...(meta.correlationId === undefined ? {} : { correlationId: meta.correlationId }),
          scoredAt: new Date(this.now()).toISOString(),
        };
        result = await store.putIfAbsent(tx, fresh);
        replayed = result !== fresh;
      }
      if (lost.aborted) {
        throw new AppError('transaction_in_progress', 'The transaction lock was lost before publishing.', {
          transient: true,
          retryAfterSec: 1,
        });
      }
      await this.publish(result);
      await store.markPublished(tx);
      return { kind: 'scored', result, replayed } as const;
    });
  }

  private publish(result: AsyncScoreResult): Promise<void> {
    return this.deps.publisher.publish({
      messageId: result.transactionId,
      ...(result.correlationId === undefined ? {} : { correlationId: result.correlationId }),
      body: result,
      applicationProperties: { decision: result.decision, modelVersion: result.model.version },
    });
  }

  private rejection(e: AppError, message: unknown, meta: MessageMeta): RejectedMessage {
    const problem = toProblem(e);
    return {
      reason: e.code === 'invalid_json' ? 'invalid_json' : 'validation_failed',
      detail: problem.detail,
      errors: problem.errors ?? [],
      originalBody: bodyText(message),
      ...(meta.messageId === undefined ? {} : { messageId: String(meta.messageId) }),
      ...(meta.correlationId === undefined ? {} : { correlationId: meta.correlationId }),
      ...(meta.deliveryCount === undefined ? {} : { deliveryCount: meta.deliveryCount }),
      rejectedAt: new Date(this.now()).toISOString(),
    };
  }
}
