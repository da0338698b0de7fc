/**
 * The case store's schema, as versioned migrations applied once each, in order, by {@link migrate}; the
 * `schema_migrations` table records which were applied. Never edit a released migration: add the next one.
 */
import type { SqlClient } from '../platform/sql/sql-client';

/** One migration: its version (ascending, never reused), name and statements (run in one transaction). */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

/** Every migration, in order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: '001_cases',
    statements: [
      `CREATE TABLE cases (
        id BIGSERIAL PRIMARY KEY,
        transaction_id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        merchant_id TEXT NOT NULL,
        payment JSONB NOT NULL,
        score DOUBLE PRECISION,
        decision TEXT NOT NULL,
        reasons JSONB NOT NULL,
        rules JSONB NOT NULL,
        rule_ids TEXT[] NOT NULL,
        rule_errors JSONB NOT NULL,
        model_name TEXT NOT NULL,
        model_version TEXT NOT NULL,
        ruleset_name TEXT,
        ruleset_version TEXT,
        profile_id TEXT,
        escalation JSONB,
        decided_at TIMESTAMPTZ NOT NULL,
        opened_at TIMESTAMPTZ NOT NULL,
        state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'assigned', 'closed')),
        assignee TEXT,
        assigned_at TIMESTAMPTZ,
        verdict TEXT CHECK (verdict IN ('fraud', 'legit')),
        verdict_reason TEXT,
        closed_at TIMESTAMPTZ,
        closed_by TEXT
      )`,
      `CREATE INDEX cases_open_queue ON cases (decided_at, id) WHERE state = 'open' AND assignee IS NULL`,
      `CREATE INDEX cases_by_decided ON cases (decided_at, id)`,
      `CREATE INDEX cases_by_user ON cases (user_id, decided_at DESC)`,
      `CREATE TABLE case_events (
        id BIGSERIAL PRIMARY KEY,
        case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
        at TIMESTAMPTZ NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        detail JSONB
      )`,
      `CREATE INDEX case_events_by_case ON case_events (case_id, id)`,
    ],
  },
  {
    version: 2,
    name: '002_audit_events',
    statements: [
      `CREATE TABLE audit_events (
        id BIGSERIAL PRIMARY KEY,
        at TIMESTAMPTZ NOT NULL,
        actor TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('ruleset', 'list', 'model', 'case')),
        name TEXT NOT NULL,
        action TEXT NOT NULL,
        old_value JSONB,
        new_value JSONB
      )`,
      `CREATE INDEX audit_events_newest ON audit_events (at DESC, id DESC)`,
      `CREATE INDEX audit_events_by_name ON audit_events (kind, name, at DESC, id DESC)`,
      `CREATE INDEX audit_events_by_actor ON audit_events (actor, at DESC, id DESC)`,
      // append-only: the table refuses UPDATE, DELETE and TRUNCATE (PL/pgSQL: PostgreSQL and PGlite alike)
      `CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP;
      END
      $$`,
      `CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events
        FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`,
      `CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
        FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()`,
    ],
  },
  {
    version: 3,
    name: '003_ruleset_drafts',
    statements: [
      `CREATE TABLE ruleset_drafts (
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        document JSONB NOT NULL,
        author TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('draft', 'submitted', 'approved', 'rejected')),
        backtest JSONB,
        approver TEXT,
        comment TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (name, version)
      )`,
      `CREATE INDEX ruleset_drafts_by_update ON ruleset_drafts (name, updated_at DESC)`,
    ],
  },
  {
    version: 4,
    name: '004_case_outbox',
    statements: [
      // what a verdict's transaction hands to the labels store and the lists (lib/cases/case-outbox.ts); a case's
      // rows go with it (erasure, retention)
      `CREATE TABLE case_outbox (
        id BIGSERIAL PRIMARY KEY,
        case_id BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('label', 'list')),
        payload JSONB NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TIMESTAMPTZ NOT NULL,
        delivered_at TIMESTAMPTZ,
        last_error TEXT
      )`,
      `CREATE INDEX case_outbox_due ON case_outbox (next_attempt_at, id) WHERE delivered_at IS NULL`,
      `CREATE INDEX case_outbox_delivered ON case_outbox (delivered_at) WHERE delivered_at IS NOT NULL`,
      `CREATE INDEX case_outbox_by_case ON case_outbox (case_id)`,
    ],
  },
  {
    version: 5,
    name: '005_audit_signals',
    statements: [
      // the signals rollout's uploads and admin changes are audited as the rulesets' are
      `ALTER TABLE audit_events DROP CONSTRAINT audit_events_kind_check`,
      `ALTER TABLE audit_events ADD CONSTRAINT audit_events_kind_check
        CHECK (kind IN ('ruleset', 'list', 'model', 'case', 'signals'))`,
    ],
  },
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
  {
    version: 7,
    name: '007_queues',
    statements: [
      // the queue a case was routed to when it was opened, and its SLA deadline (lib/cases/case-queues.ts); cases
      // opened before this migration have neither
      `ALTER TABLE cases ADD COLUMN queue TEXT`,
      `ALTER TABLE cases ADD COLUMN sla_due_at TIMESTAMPTZ`,
      // take next per queue; an analyst's own cases; the SLA gauge; analytics over the cases closed in a range
      `CREATE INDEX cases_open_by_queue ON cases (queue, decided_at, id) WHERE state = 'open' AND assignee IS NULL`,
      `CREATE INDEX cases_by_assignee ON cases (assignee, decided_at, id) WHERE assignee IS NOT NULL`,
      `CREATE INDEX cases_open_by_sla ON cases (sla_due_at) WHERE state <> 'closed'`,
      `CREATE INDEX cases_by_closed ON cases (closed_at) WHERE state = 'closed'`,
    ],
  },
  {
    version: 8,
    name: '008_case_signals',
    statements: [
      // the signals version that served the payment, its signals (value, definition) and which mattered
      // (lib/cases/case-signals.ts); cases opened before this migration, or without signals, have none
      `ALTER TABLE cases ADD COLUMN signals JSONB`,
    ],
  },
];

/** The lock key serializing migrations across instances (`pg_advisory_xact_lock`). */
const MIGRATION_LOCK = 7_302_019;

/**
 * Applies the migrations not applied yet, each in its own transaction, under a transaction-scoped advisory lock
 * (instances starting together apply each migration once). Returns the versions applied by this call.
 */
export async function migrate(db: SqlClient, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
  });
  const applied: number[] = [];
  for (const m of migrations) {
    const done = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
      if (seen.length > 0) return false;
      for (const s of m.statements) await tx.query(s);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      return true;
    });
    if (done) applied.push(m.version);
  }
  return applied;
}
