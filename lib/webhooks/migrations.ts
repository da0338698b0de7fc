/**
 * The webhooks' migrations in the case database (version 6 of its one sequence): endpoints, their secrets, and the
 * deliveries the case changes write (lib/cases/case-events.ts); it also lets the audit trail record webhook changes.
 * Applied by the platform's runner (lib/platform/sql/migrate.ts) with the case store's and the governance's lists, in
 * version order. Never edit a released migration: add the next one.
 */
import type { MigrationSet } from '../platform/sql/migrate';

/** The webhooks' migrations, in version order. */
export const WEBHOOK_MIGRATIONS: MigrationSet = {
  owner: 'webhooks',
  migrations: [
    {
      version: 6,
      name: '006_webhooks',
      statements: [
        // where a case's events go (lib/webhooks): a merchant's webhook endpoint, or the platform's Service Bus topic
        `CREATE TABLE webhook_endpoints (
        id BIGSERIAL PRIMARY KEY,
        kind TEXT NOT NULL DEFAULT 'webhook' CHECK (kind IN ('webhook', 'topic')),
        url TEXT NOT NULL,
        events TEXT[] NOT NULL,
        created_by TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        disabled BOOLEAN NOT NULL DEFAULT false
      )`,
        `CREATE UNIQUE INDEX webhook_endpoints_topic ON webhook_endpoints (url) WHERE kind = 'topic'`,
        // an endpoint's active signing secrets (rotation: several at once, each numbered)
        `CREATE TABLE webhook_secrets (
        endpoint_id BIGINT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        n INTEGER NOT NULL,
        secret TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (endpoint_id, n)
      )`,
        // one row per event per endpoint, written in the case change's own transaction (lib/cases/case-events.ts)
        `CREATE TABLE webhook_deliveries (
        id BIGSERIAL PRIMARY KEY,
        endpoint_id BIGINT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
        transaction_id TEXT NOT NULL,
        event_type TEXT NOT NULL CHECK (event_type IN ('review.opened', 'review.closed')),
        payload TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        window_start TIMESTAMPTZ NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TIMESTAMPTZ NOT NULL,
        last_attempt_at TIMESTAMPTZ,
        delivered_at TIMESTAMPTZ,
        dead_at TIMESTAMPTZ,
        last_error TEXT,
        last_status INTEGER
      )`,
        `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id)
        WHERE delivered_at IS NULL AND dead_at IS NULL`,
        `CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, case_id, id) WHERE delivered_at IS NULL`,
        `CREATE INDEX webhook_deliveries_dead ON webhook_deliveries (id) WHERE dead_at IS NOT NULL`,
        `CREATE INDEX webhook_deliveries_delivered ON webhook_deliveries (delivered_at) WHERE delivered_at IS NOT NULL`,
        `CREATE INDEX webhook_deliveries_by_case ON webhook_deliveries (case_id)`,
        // the audit trail records webhook changes too
        `ALTER TABLE audit_events DROP CONSTRAINT audit_events_kind_check`,
        `ALTER TABLE audit_events ADD CONSTRAINT audit_events_kind_check
        CHECK (kind IN ('ruleset', 'list', 'model', 'case', 'signals', 'webhook'))`,
      ],
    },
  ],
};
