/**
 * The case store's migrations (versions 1, 4, 7, 8 of the case database's one sequence; governance and webhooks own
 * the others: lib/governance/migrations.ts, lib/webhooks/migrations.ts). Applied by the platform's runner
 * (lib/platform/sql/migrate.ts) with the other owners' lists, in version order. Never edit a released migration: add
 * the next one, with a version no other list uses.
 */
import type { MigrationSet } from '../platform/sql/migrate';

/** The case store's migrations, in version order. */
export const CASE_MIGRATIONS: MigrationSet = {
  owner: 'cases',
  migrations: [
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
  ],
};
