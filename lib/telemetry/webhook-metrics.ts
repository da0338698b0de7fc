/**
 * Metrics of the case events' webhooks (lib/webhooks): deliveries, failed attempts and dead letters, by target
 * (`webhook`, `topic`) and event type; never a payload, a url or a secret. Created by {@link Telemetry} on its meter.
 */
import type { Meter } from '@opentelemetry/api';
import type { WebhookRelayEvents } from '../webhooks/webhook-relay';

/** The webhook instruments on one meter. */
export class WebhookMetrics {
  private readonly delivered;
  private readonly failed;
  private readonly dead;

  constructor(meter: Meter) {
    this.delivered = meter.createCounter('webhooks.delivered', {
      description: 'Case events delivered to a webhook endpoint or the case-events topic (attribute target, event)',
    });
    this.failed = meter.createCounter('webhooks.failed', {
      description:
        'Delivery attempts that failed and are retried on their backoff (attribute target, event, error; target pass: the outbox could not be read)',
    });
    this.dead = meter.createCounter('webhooks.dead_lettered', {
      description: 'Deliveries dead-lettered after their last attempt (attribute target, event, error)',
    });
  }

  /** Handlers for the relay's events. */
  events(): Partial<WebhookRelayEvents> {
    return {
      delivered: (e) => this.delivered.add(1, { target: e.target, event: e.eventType }),
      failed: (e) => this.failed.add(1, { target: e.target, event: e.eventType, error: e.error }),
      deadLettered: (e) => this.dead.add(1, { target: e.target, event: e.eventType, error: e.error }),
      passFailed: (e) => this.failed.add(1, { target: 'pass', error: e.error }),
    };
  }
}
