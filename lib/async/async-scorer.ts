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

/** What processing one message produced. */
export type MessageOutcome =
  | { readonly kind: 'scored'; readonly result: AsyncScoreResult; readonly replayed: boolean }
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
 * Scores payment events from a queue exactly once per transaction under at-least-once delivery:
 * the first result is stored (SET NX) and every later delivery re-publishes the stored result without
 * scoring again; scoring for one transaction never runs concurrently. Invalid messages become
 * rejections (never retried); transient failures throw so the message is redelivered.
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
    const stored = await store.get(event.transactionId);
    if (stored !== undefined) {
      await this.publish(stored);
      return { kind: 'scored', result: stored, replayed: true };
    }
    let replayed = false;
    const result = await guard.run(event.transactionId, async () => {
      const again = await store.get(event.transactionId);
      if (again !== undefined) {
        replayed = true;
        return again;
      }
      await this.deps.sessions.ensureReady();
      const scored = await this.deps.scorer.score(event);
      const fresh: AsyncScoreResult = {
        ...scored,
        ...(meta.correlationId === undefined ? {} : { correlationId: meta.correlationId }),
        scoredAt: new Date(this.now()).toISOString(),
      };
      const kept = await store.putIfAbsent(event.transactionId, fresh);
      replayed = kept !== fresh;
      return kept;
    });
    await this.publish(result);
    return { kind: 'scored', result, replayed };
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
