import { AppError, toAppError } from '../errors/errors';
import type { SessionManager } from '../inference/session-manager';
import type { PaymentEvent } from '../domain/payment-event';
import type { Scorer } from '../scoring/scorer';
import { noopTracer, type StageTracer } from '../platform/stage-tracer';
import { BatchLocks, type LockedStatus } from './batch-locks';
import type { ResultPublisher } from './result-publisher';
import type { AsyncScoreResult, ResultStore } from './result-store';
import type { TransactionGuard } from './transaction-guard';
import { validateBatch, type MessageMeta, type QueueMessage, type RejectedMessage } from './validate-batch';

export type { MessageMeta, QueueMessage, RejectedMessage } from './validate-batch';

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
  /**
   * Inference deadline of one delivery batch, ms (`REQUEST_DEADLINE_MAX_MS`), also the budget of its context
   * lookups: queue work is not latency-bound, and a whole batch's lookups share one burst of store round
   * trips that the request path's `REDIS_TIMEOUT_MS` (25 ms) is not sized for. Default: the scorer's.
   */
  readonly deadlineMs?: number;
  /**
   * Spans: one `validate` span per delivery batch around decoding and validating its messages
   * (`messaging.batch.message_count`, `validate.rejected`). Default none.
   */
  readonly tracer?: StageTracer;
}

/**
 * Scores payment events from a queue and publishes exactly one `risk-completed` per transaction for the
 * whole idempotency TTL, under at-least-once delivery and across instances (docs/async.md, "Exactly once"):
 * - a confirmed publish is recorded in the store and never repeated (fast path, no lock);
 * - otherwise, holding the transaction's lock: the stored result is re-published (never a new score), or
 *   the event is scored, stored (first writer wins), published with message id = transactionId, and marked;
 * - the only gap (published, then a crash before the mark) re-publishes the same message id and body, which
 *   the topic's duplicate detection drops: its window is at least the store's TTL (config check).
 * A delivery batch (`cardinality: 'many'`) is processed with one store pipeline per step and one
 * `scoreBatch` for the events that need scoring; each message keeps the guarantees above on its own.
 * Invalid messages become rejections (never retried); transient failures throw so the batch is redelivered.
 */
export class AsyncScorer {
  private readonly now: () => number;
  private readonly locks: BatchLocks;
  constructor(private readonly deps: AsyncScorerDeps) {
    this.now = deps.now ?? Date.now;
    this.locks = new BatchLocks(deps.guard);
  }

  /** Processes one message body with its trigger metadata (a batch of one). Throws only transient errors. */
  async process(message: unknown, meta: MessageMeta): Promise<MessageOutcome> {
    const [outcome] = await this.processBatch([{ body: message, meta }]);
    return outcome as MessageOutcome;
  }

  /**
   * Processes a delivery batch: one outcome per message, in order. Every message is carried as far as it
   * can go (published and marked where possible); then, if any failed transiently, throws for the whole
   * batch (Service Bus redelivers all of it, and the marks make the redelivery publish only what is
   * missing). A single failure is rethrown as is; several become one error naming each (`messages.{i}`).
   * A transaction repeated within the batch is processed once; its other messages are `duplicate`s.
   */
  async processBatch(messages: readonly QueueMessage[]): Promise<MessageOutcome[]> {
    const outcomes = new Array<MessageOutcome | undefined>(messages.length);
    const tracer = this.deps.tracer ?? noopTracer;
    const { events, repeats, rejected, failures } = tracer.enabled
      ? tracer.spanSync('validate', { 'messaging.batch.message_count': messages.length }, (span) => {
          const v = validateBatch(messages, this.now);
          span.setAttributes({ 'validate.rejected': v.rejected.size });
          return v;
        })
      : validateBatch(messages, this.now);
    for (const [i, rejection] of rejected) outcomes[i] = { kind: 'rejected', rejection };
    if (events.size > 0) await this.processEvents(messages, events, outcomes, failures);
    for (const [i, first] of repeats) {
      if (failures.has(first)) failures.set(i, failures.get(first));
      else outcomes[i] = { kind: 'duplicate', transactionId: (events.get(first) as PaymentEvent).transactionId };
    }
    if (failures.size > 0) throw batchFailure(failures, messages.length);
    return outcomes as MessageOutcome[];
  }

  /** Looks up, locks, scores, stores, publishes and marks the batch's distinct transactions. */
  private async processEvents(
    messages: readonly QueueMessage[],
    events: ReadonlyMap<number, PaymentEvent>,
    outcomes: (MessageOutcome | undefined)[],
    failures: Map<number, unknown>,
  ): Promise<void> {
    const { store } = this.deps;
    const at = new Map<string, number>();
    for (const [i, e] of events) at.set(e.transactionId, i);
    const fail = (txs: Iterable<string>, err: unknown): void => {
      for (const tx of txs) failures.set(at.get(tx) as number, err);
    };
    let seen;
    try {
      seen = await store.lookupMany([...at.keys()]);
    } catch (err) {
      return fail(at.keys(), err);
    }
    const pending = [...at.keys()].filter((tx, k) => {
      if (seen[k]?.published !== true) return true;
      outcomes[at.get(tx) as number] = { kind: 'duplicate', transactionId: tx };
      return false;
    });
    if (pending.length === 0) return;
    const { failed, shared } = await this.locks.run(pending, async (held) => {
      const statuses = new Map<string, LockedStatus>();
      const meta = (tx: string): MessageMeta => (messages[at.get(tx) as number] as QueueMessage).meta;
      try {
        await this.underLocks(held, events, at, meta, outcomes, (tx, err) => fail([tx], err));
      } catch (err) {
        fail(held.keys(), err);
      }
      for (const tx of held.keys()) statuses.set(tx, outcomes[at.get(tx) as number] === undefined ? 'failed' : 'done');
      return statuses;
    });
    for (const [tx, err] of failed) fail([tx], err);
    for (const [tx, status] of shared) {
      if (status === 'done') outcomes[at.get(tx) as number] = { kind: 'duplicate', transactionId: tx };
      else
        fail(
          [tx],
          new AppError('transaction_in_progress', 'The transaction was being processed by another delivery.', {
            transient: true,
            retryAfterSec: 1,
          }),
        );
    }
  }

  /** The locked part: lookup again, score what has no stored result (one `scoreBatch`), store, publish, mark. */
  private async underLocks(
    held: ReadonlyMap<string, AbortSignal>,
    events: ReadonlyMap<number, PaymentEvent>,
    at: ReadonlyMap<string, number>,
    meta: (tx: string) => MessageMeta,
    outcomes: (MessageOutcome | undefined)[],
    fail: (tx: string, err: unknown) => void,
  ): Promise<void> {
    const { store } = this.deps;
    const txs = [...held.keys()];
    if (txs.length === 0) return;
    const again = await store.lookupMany(txs); // another instance may have finished while we waited
    const ready = new Map<string, { result: AsyncScoreResult; replayed: boolean }>();
    const toScore: string[] = [];
    txs.forEach((tx, k) => {
      const state = again[k];
      if (state?.published === true) outcomes[at.get(tx) as number] = { kind: 'duplicate', transactionId: tx };
      else if (state?.result !== undefined) ready.set(tx, { result: state.result, replayed: true });
      else toScore.push(tx);
    });
    if (toScore.length > 0) {
      try {
        await this.deps.sessions.ensureReady();
        const batch = toScore.map((tx) => events.get(at.get(tx) as number) as PaymentEvent);
        const scored = await this.deps.scorer.scoreBatch(
          batch,
          this.deps.deadlineMs === undefined
            ? {}
            : { deadlineMs: this.deps.deadlineMs, contextTimeoutMs: this.deps.deadlineMs },
        );
        const scoredAt = new Date(this.now()).toISOString();
        await Promise.all(
          toScore.map(async (tx, k) => {
            const { correlationId } = meta(tx);
            const fresh: AsyncScoreResult = {
              ...(scored[k] as AsyncScoreResult),
              ...(correlationId === undefined ? {} : { correlationId }),
              scoredAt,
            };
            try {
              const result = await store.putIfAbsent(tx, fresh);
              ready.set(tx, { result, replayed: result !== fresh });
            } catch (err) {
              fail(tx, err);
            }
          }),
        );
      } catch (err) {
        for (const tx of toScore) fail(tx, err);
      }
    }
    const published: string[] = [];
    await Promise.all(
      [...ready].map(async ([tx, { result }]) => {
        if (held.get(tx)?.aborted === true) {
          return fail(
            tx,
            new AppError('transaction_in_progress', 'The transaction lock was lost before publishing.', {
              transient: true,
              retryAfterSec: 1,
            }),
          );
        }
        try {
          await this.publish(result);
          published.push(tx);
        } catch (err) {
          fail(tx, err);
        }
      }),
    );
    try {
      await store.markManyPublished(published);
    } catch (err) {
      for (const tx of published) fail(tx, err);
      return;
    }
    for (const tx of published) {
      const { result, replayed } = ready.get(tx) as { result: AsyncScoreResult; replayed: boolean };
      outcomes[at.get(tx) as number] = { kind: 'scored', result, replayed };
    }
  }

  private publish(result: AsyncScoreResult): Promise<void> {
    return this.deps.publisher.publish({
      messageId: result.transactionId,
      ...(result.correlationId === undefined ? {} : { correlationId: result.correlationId }),
      body: result,
      applicationProperties: { decision: result.decision, modelVersion: result.model.version },
    });
  }
}

/**
 * The error of a batch with failed messages: a single failure as is (a batch of one behaves like the
 * one-message trigger); several as one error with the first one's code, naming each failed message.
 */
function batchFailure(failures: ReadonlyMap<number, unknown>, size: number): unknown {
  const all = [...failures].sort(([a], [b]) => a - b);
  if (all.length === 1) return (all[0] as [number, unknown])[1];
  const errors = all.map(([i, err]) => ({ path: `messages.${i}`, message: toAppError(err).code }));
  const first = toAppError((all[0] as [number, unknown])[1]);
  return new AppError(first.code, `${all.length} of ${size} messages failed; the batch is redelivered.`, {
    cause: first,
    errors,
    transient: all.every(([, err]) => toAppError(err).transient),
    retryAfterSec: first.retryAfterSec ?? 1,
  });
}
