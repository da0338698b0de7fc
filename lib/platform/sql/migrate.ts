/**
 * The migration runner of a PostgreSQL database several subsystems share: each owns its list of versioned
 * migrations (the case store's, the governance's, the webhooks'); {@link migrate} applies the union in version
 * order, each migration once, and records it in `schema_migrations`. Never edit a released migration: add the next
 * one, with a version no other list uses.
 */
import type { SqlClient } from './sql-client';

/** One migration: its version (ascending, never reused), name and statements (run in one transaction). */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

/** The migrations one subsystem owns, in version order. */
export interface MigrationSet {
  /** The subsystem, e.g. `cases` (named when two lists claim one version). */
  readonly owner: string;
  readonly migrations: readonly Migration[];
}

/**
 * The union of `sets` in version order (a set given twice counts once).
 * @throws Error naming both owners when two migrations claim one version, or a version that is not a positive integer.
 */
export function schemaOf(sets: readonly MigrationSet[]): Migration[] {
  const byVersion = new Map<number, { owner: string; migration: Migration }>();
  for (const set of new Set(sets))
    for (const m of set.migrations) {
      if (!Number.isSafeInteger(m.version) || m.version < 1)
        throw new Error(`migration ${m.name} of ${set.owner}: version ${m.version} is not a positive integer`);
      const other = byVersion.get(m.version);
      if (other !== undefined)
        throw new Error(
          `migration version ${m.version} is claimed twice: ${other.migration.name} (${other.owner}) and ${m.name} (${set.owner})`,
        );
      byVersion.set(m.version, { owner: set.owner, migration: m });
    }
  return [...byVersion.values()].map((v) => v.migration).sort((a, b) => a.version - b.version);
}

/** The lock key serializing migrations across instances (`pg_advisory_xact_lock`). */
const MIGRATION_LOCK = 7_302_019;

/**
 * Applies the migrations of `sets` not applied yet, in version order, each in its own transaction, under a
 * transaction-scoped advisory lock (instances starting together apply each migration once). Returns the versions
 * applied by this call.
 */
export async function migrate(db: SqlClient, sets: readonly MigrationSet[]): Promise<number[]> {
  const migrations = schemaOf(sets);
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
