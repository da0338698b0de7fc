/**
 * PostgreSQL through `pg` (node-postgres): a bounded pool. In Azure (`PG_ENTRA_AUTH=true`) the password of each
 * new connection is an Entra ID access token of the app's managed identity, asked of the credential each time
 * (it caches and refreshes the token), over TLS; no password is ever a setting. Locally: trust auth.
 */
import type { Pool, PoolClient } from 'pg';
import type { CaseSettings } from '../../config/case-settings';
import { azureCredential } from '../credential';
import type { SqlClient } from './sql-client';

/** The Entra ID scope of Azure Database for PostgreSQL tokens. */
export const POSTGRES_TOKEN_SCOPE = 'https://ossrdbms-aad.database.windows.net/.default';

/** Where and how to connect: the `postgres` case store settings (`PG_*`), and a schema for tests. */
export type PgSettings = Omit<Extract<CaseSettings['store'], { kind: 'postgres' }>, 'kind'> & {
  /** `search_path` of every connection (tests: a fresh schema per run); default the server's. */
  readonly schema?: string;
};

/** What gives the access token (an `@azure/identity` credential). */
export interface TokenSource {
  getToken(scope: string): Promise<{ readonly token: string } | null>;
}

/** A `pg` pool as a {@link SqlClient}. */
export class PgClient implements SqlClient {
  private constructor(private readonly pool: Pool) {}

  /**
   * A pool (connections open on first use). With `entraAuth`, `credential` (default the process's credential of
   * `managedIdentityClientId`, lib/platform/credential.ts) gives each connection's password.
   */
  static async create(s: PgSettings, credential?: TokenSource, managedIdentityClientId?: string): Promise<PgClient> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pg = require('pg') as typeof import('pg');
    const tokens = s.entraAuth ? (credential ?? azureCredential(managedIdentityClientId)) : undefined;
    const pool = new pg.Pool({
      host: s.host,
      port: s.port,
      database: s.database,
      user: s.user,
      max: s.poolMax,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
      ...(s.schema === undefined ? {} : { options: `-c search_path=${s.schema}` }),
      ...(tokens === undefined
        ? {}
        : {
            ssl: { rejectUnauthorized: true },
            password: async () => {
              const t = await tokens.getToken(POSTGRES_TOKEN_SCOPE);
              if (t === null) throw new Error('no Entra ID token for PostgreSQL');
              return t.token;
            },
          }),
    });
    pool.on('error', () => undefined); // an idle connection's failure: the next query reconnects
    return new PgClient(pool);
  }

  async query<R extends Record<string, unknown>>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    return (await this.pool.query<R>(text, [...params])).rows;
  }

  async transaction<T>(fn: (tx: Pick<SqlClient, 'query'>) => Promise<T>): Promise<T> {
    const client: PoolClient = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const out = await fn({
        query: async <R extends Record<string, unknown>>(text: string, params: readonly unknown[] = []) =>
          (await client.query<R>(text, [...params])).rows,
      });
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async exec(script: string): Promise<void> {
    await this.pool.query(script);
  }

  async dispose(): Promise<void> {
    await this.pool.end();
  }
}
