/** The embedded PostgreSQL of `npm start` (PGlite, WebAssembly) as a {@link SqlClient}; data in a folder. */
import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import type { SqlClient } from './sql-client';

/** PGlite in `dir` (created if absent); the same SQL as the server. */
export class PgliteClient implements SqlClient {
  private constructor(private readonly db: PGlite) {}

  /** Opens (or creates) the database in `dir`; `undefined` = in memory. */
  static async create(dir: string | undefined): Promise<PgliteClient> {
    if (dir !== undefined) mkdirSync(dir, { recursive: true });
    // loaded only when the embedded store is configured (start-up cost)
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { PGlite: Db } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
    return new PgliteClient(await Db.create(dir === undefined ? undefined : { dataDir: dir }));
  }

  async query<R extends Record<string, unknown>>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    return (await this.db.query<R>(text, [...params])).rows;
  }

  transaction<T>(fn: (tx: Pick<SqlClient, 'query'>) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) =>
      fn({
        query: async <R extends Record<string, unknown>>(text: string, params: readonly unknown[] = []) =>
          (await tx.query<R>(text, [...params])).rows,
      }),
    );
  }

  async exec(script: string): Promise<void> {
    await this.db.exec(script);
  }

  async dispose(): Promise<void> {
    if (!this.db.closed) await this.db.close();
  }
}
