/**
 * Builds the webhooks from configuration (called once by the composition root): the API and the relay of the
 * webhook outbox, on the case database. With a Service Bus namespace, the events also go to the topic
 * `CASE_EVENTS_TOPIC` (its module, and the Service Bus SDK, load only then); under `npm start`, webhooks only.
 * @module
 */
import type { TokenCredential } from '@azure/identity';
import { CASE_EVENT_TYPES } from '../cases/case-events';
import type { Cases } from '../cases/create-cases';
import type { Config } from '../config/config';
import { AppError } from '../errors/errors';
import { Identity } from '../identity/identity';
import type { Logger } from '../platform/logger';
import { unrefTimers, type Timers } from '../platform/timers';
import { DEFAULT_BACKOFF } from './webhook-backoff';
import { WebhookEndpoints } from './webhook-endpoints';
import { WebhookRelay, type TopicPublisher, type WebhookRelayEvents } from './webhook-relay';
import type { Fetch } from './webhook-sender';
import { WebhookService, type WebhookAuditEntry } from './webhook-service';
import { azureCredential } from '../platform/credential';

/** Dependencies of {@link createWebhooks}; every one but the first three has a production default. */
export interface WebhooksDeps {
  readonly logger: Logger;
  /** The case queue: its database holds the endpoints and the outbox. */
  readonly cases: Cases;
  /** Appends an audit entry (lib/governance). */
  readonly record: (e: WebhookAuditEntry) => Promise<void>;
  /** The topic's publisher; default the Service Bus topic when a namespace is configured, else none. */
  readonly topic?: TopicPublisher;
  /** Service Bus credential; default a `DefaultAzureCredential` (`ServiceBusConnection__clientId`). */
  readonly serviceBusCredential?: TokenCredential;
  readonly fetch?: Fetch;
  readonly timers?: Timers;
  /** Wall clock, ms. */
  readonly wallClock?: () => number;
  /** The relay's longest wait between passes, ms (tests). Default 30 s. */
  readonly pollMs?: number;
  /** Telemetry's and tests' handlers of the relay's events. */
  readonly on?: Partial<WebhookRelayEvents>;
}

/** The webhooks of one engine. */
export class Webhooks {
  constructor(
    /** The API; `undefined` without a case database. */
    readonly service: WebhookService | undefined,
    private readonly relay?: WebhookRelay,
    private readonly topic?: TopicPublisher,
  ) {}

  /** A case change committed: deliver now. */
  wake(): void {
    this.relay?.wake();
  }

  async dispose(): Promise<void> {
    await this.relay?.dispose();
    await this.topic?.dispose();
  }
}

/** Builds the webhooks (none without a case database) and starts the relay. */
export async function createWebhooks(config: Config, deps: WebhooksDeps): Promise<Webhooks> {
  if (deps.cases.service === undefined) return new Webhooks(undefined);
  const { logger } = deps;
  const wallClock = deps.wallClock ?? Date.now;
  const timers = deps.timers ?? unrefTimers;
  const w = config.cases.webhooks;
  const topic = deps.topic ?? (await serviceBusTopic(config, deps));
  const limited = (msg: string): ((fields: Record<string, unknown>) => void) => {
    let last = Number.NEGATIVE_INFINITY;
    let since = 0;
    return (fields) => {
      since++;
      const t = wallClock();
      if (t - last < 10_000) return;
      logger.warn(msg, { ...fields, count: since });
      since = 0;
      last = t;
    };
  };
  const failed = limited('webhooks: a delivery attempt failed; it is retried on its backoff');
  const passFailed = limited('webhooks: the outbox could not be read; the relay retries');
  let topicSet = false;
  const relay = new WebhookRelay({
    sql: () => {
      const sql = deps.cases.sql();
      if (!topicSet) {
        topicSet = true; // once per process, when the database is first reached (best effort)
        new WebhookEndpoints(sql)
          .setTopic(topic === undefined ? undefined : w.topic, CASE_EVENT_TYPES, wallClock())
          .catch(() => (topicSet = false));
      }
      return sql;
    },
    timers,
    wallClock,
    ...(deps.fetch === undefined ? {} : { fetch: deps.fetch }),
    ...(topic === undefined ? {} : { topic }),
    timeoutMs: w.timeoutMs,
    backoff: { ...DEFAULT_BACKOFF, windowMs: w.retryWindowMs },
    ...(deps.pollMs === undefined ? {} : { pollMs: deps.pollMs }),
    on: {
      delivered: (e) => deps.on?.delivered?.(e),
      failed: (e) => {
        deps.on?.failed?.(e);
        failed({ target: e.target, event: e.eventType, attempts: e.attempts, error: e.error, retryInMs: e.retryInMs });
      },
      deadLettered: (e) => {
        deps.on?.deadLettered?.(e);
        logger.error('webhooks: a delivery was dead-lettered after its last attempt', {
          target: e.target,
          event: e.eventType,
          attempts: e.attempts,
          error: e.error,
          rows: e.rows,
        });
      },
      passFailed: (e) => {
        deps.on?.passFailed?.(e);
        passFailed({ error: e.error, retryInMs: e.retryInMs });
      },
    },
  });
  const service = new WebhookService({
    sql: () => deps.cases.sql(),
    identity: new Identity(config.cases.identity),
    record: deps.record,
    wallClock,
    wake: () => relay.wake(),
  });
  relay.start();
  return new Webhooks(service, relay, topic);
}

/** The Service Bus topic, when a namespace is configured. */
async function serviceBusTopic(config: Config, deps: WebhooksDeps): Promise<TopicPublisher | undefined> {
  const sb = config.serviceBus;
  if (sb.fullyQualifiedNamespace === undefined) return undefined;
  const credential = deps.serviceBusCredential ?? azureCredential(sb.clientId);
  const { ServiceBusTopicPublisher } = await import('../async/service-bus-publisher');
  const p = await ServiceBusTopicPublisher.create(
    { fullyQualifiedNamespace: sb.fullyQualifiedNamespace, credential },
    config.cases.webhooks.topic,
  );
  deps.logger.info('webhooks: case events also go to the Service Bus topic', { topic: config.cases.webhooks.topic });
  return {
    publish: (messageId, eventType, payload) =>
      p.publish({ messageId, body: JSON.parse(payload) as unknown, applicationProperties: { type: eventType } }),
    dispose: () => p.dispose(),
  };
}

/** @throws AppError `not_found` when there is no webhook API (no case database). */
export function requireService(w: Webhooks | undefined): WebhookService {
  if (w?.service === undefined) throw new AppError('not_found', 'Webhooks need a case database (CASE_STORE=none).');
  return w.service;
}
