/**
 * The governance's migrations in the case database (versions 2, 3, 5 of its one sequence): the audit trail
 * (`audit_events`, append-only) and the ruleset drafts. Applied by the platform's runner (lib/platform/sql/migrate.ts)
 * with the case store's and the webhooks' lists, in version order. Never edit a released migration: add the next one.
 */
import type { MigrationSet } from '../platform/sql/migrate';

/** The governance's migrations, in version order. */
export const GOVERNANCE_MIGRATIONS: MigrationSet = {
  owner: 'governance',
  migrations: [
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
      version: 5,
      name: '005_audit_signals',
      statements: [
        // the signals rollout's uploads and admin changes are audited as the rulesets' are
        `ALTER TABLE audit_events DROP CONSTRAINT audit_events_kind_check`,
        `ALTER TABLE audit_events ADD CONSTRAINT audit_events_kind_check
        CHECK (kind IN ('ruleset', 'list', 'model', 'case', 'signals'))`,
      ],
    },
  ],
};
