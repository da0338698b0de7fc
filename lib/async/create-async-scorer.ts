import type { TokenCredential } from '@azure/identity';
import type { Redis } from 'ioredis';
import type { Config } from '../config/config';
import type { SessionManager } from '../inference/session-manager';
import type { Scorer } from '../scoring/scorer';
import type { Logger } from '../platform/logger';
import type { StageTracer } from '../platform/stage-tracer';
import { AsyncScorer } from './async-scorer';
import { NO_BUS, type MessageSender } from './message-bus';
import { InProcessTopicPublisher, NoTopicPublisher, type ResultPublisher } from './result-publisher';
import { MemoryResultStore, RedisResultStore } from './result-store';
import { LocalTransactionGuard, RedisTransactionGuard } from './transaction-guard';
import { azureCredential } from '../platform/credential';

/** Dependencies of {@link createAsyncScorer}. */
export interface AsyncScorerWiring {
  readonly scorer: Scorer;
  readonly sessions: SessionManager;
  readonly logger: Logger;
  /** The engine's shared Redis client, if Redis is configured (it may be set up later). */
  readonly redis: (() => Redis | undefined) | undefined;
  /** The host's bus (`npm start`: its embedded bus), used when no Service Bus namespace is configured. */
  readonly bus?: MessageSender;
  /** Overrides the publisher (tests). */
  readonly publisher?: ResultPublisher;
  /** Wraps the publisher the scorer uses (telemetry: `publish` span, `traceparent` on each result). */
  readonly decoratePublisher?: (publisher: ResultPublisher) => ResultPublisher;
  /** Spans: the `validate` span of each delivery batch. Default none. */
  readonly tracer?: StageTracer;
  readonly credential?: TokenCredential;
  /** Wall clock, epoch ms. */
  readonly now?: () => number;
}

/**
 * Builds asynchronous scoring: results and published marks in Redis (`SET NX`) and a renewed Redis lock per
 * transaction when Redis is configured, else a bounded in-process store with the same TTL; results published
 * to the Service Bus topic (message id = transactionId) when a namespace is configured, else to the host's bus (none
 * without one: each publish fails, {@link NoTopicPublisher}).
 */
export async function createAsyncScorer(
  config: Config,
  w: AsyncScorerWiring,
): Promise<{ asyncScorer: AsyncScorer; publisher: ResultPublisher }> {
  const { idempotency, serviceBus, redis: r } = config;
  const store =
    w.redis !== undefined
      ? new RedisResultStore(w.redis, r.keyPrefix, idempotency.ttlSec, {
          // Treated as absent (re-scored, or skipped if its publish was confirmed); the value is never logged.
          onCorrupt: (e) => w.logger.warn('stored result unreadable; treated as absent', { ...e }),
        })
      : new MemoryResultStore(idempotency.ttlSec, idempotency.maxEntries);
  const guard =
    w.redis !== undefined
      ? new RedisTransactionGuard(w.redis, r.keyPrefix, { lockTtlMs: idempotency.lockTtlMs })
      : new LocalTransactionGuard();
  let publisher = w.publisher;
  if (publisher === undefined && serviceBus.fullyQualifiedNamespace !== undefined) {
    // the Azure SDK loads only here, when a namespace is configured (start-up time of `npm start`)
    const credential = w.credential ?? azureCredential(serviceBus.clientId);
    const { ServiceBusTopicPublisher } = await import('./service-bus-publisher');
    publisher = await ServiceBusTopicPublisher.create(
      { fullyQualifiedNamespace: serviceBus.fullyQualifiedNamespace, credential },
      serviceBus.resultsTopic,
    );
    w.logger.info('results publisher: Service Bus topic', { topic: serviceBus.resultsTopic });
  }
  if (publisher === undefined && w.bus === undefined)
    w.logger.warn(`results publisher: none, so every async result fails to publish: ${NO_BUS.message}`);
  publisher ??=
    w.bus === undefined ? new NoTopicPublisher() : new InProcessTopicPublisher(w.bus, serviceBus.resultsTopic);
  const asyncScorer = new AsyncScorer({
    scorer: w.scorer,
    sessions: w.sessions,
    store,
    guard,
    publisher: w.decoratePublisher?.(publisher) ?? publisher,
    deadlineMs: config.inference.deadlineMaxMs,
    tracer: w.tracer,
    ...(w.now === undefined ? {} : { now: w.now }),
  });
  return { asyncScorer, publisher };
}
