/**
 * The SQL the case store needs of a PostgreSQL connection: parameterized queries and scripts. Two
 * implementations: `pg` (a pool; PostgreSQL server, Azure Database for PostgreSQL) and PGlite (embedded, `npm start`).
 */

/** A PostgreSQL connection (or pool) the case store runs its SQL on. */
export interface SqlClient {
  /** Runs one parameterized statement (`$1`, `$2`...) and returns its rows. */
  query<R extends Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** Runs `fn` in one transaction on one connection (committed when it resolves, rolled back when it throws). */
  transaction<T>(fn: (tx: Pick<SqlClient, 'query'>) => Promise<T>): Promise<T>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
  /** Closes the pool or database. */
  dispose(): Promise<void>;
}
