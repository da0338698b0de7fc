/**
 * Case stores for the tests: the machine's PostgreSQL server (127.0.0.1:5432, database `test`, trust auth) in a
 * fresh schema per store, dropped at the end, and PGlite in a temporary folder; and case fixtures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before } from 'node:test';
import type { CaseStore, NewCase } from '../../lib/cases/case-store';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { PgClient } from '../../lib/platform/sql/pg-client';
import { PgliteClient } from '../../lib/platform/sql/pglite-client';
import type { SqlClient } from '../../lib/platform/sql/sql-client';
import type { PaymentEvent } from '../../lib/domain/payment-event';
import { SHARED_WITH_CASES } from '../support/case-database';

/** The test server's settings (`PG_TEST_USER` overrides the user, default `postgres`). */
export const TEST_PG = {
  host: '127.0.0.1',
  port: 5432,
  database: 'test',
  user: process.env['PG_TEST_USER'] ?? 'postgres',
  entraAuth: false,
  poolMax: 30,
};

/** A database to run the store on, and how to remove it. */
export interface TestDb {
  readonly name: string;
  /** A new client on the same database (the previous one may be disposed). */
  client(): Promise<SqlClient>;
  cleanup(): Promise<void>;
}

/** A fresh schema on the PostgreSQL server. */
export function serverDb(): TestDb {
  const schema = `cases_test_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  let admin: PgClient | undefined;
  return {
    name: 'postgres server',
    async client() {
      if (admin === undefined) {
        admin = await PgClient.create({ ...TEST_PG, poolMax: 1 });
        await admin.exec(`CREATE SCHEMA ${schema}`);
      }
      return PgClient.create({ ...TEST_PG, schema });
    },
    async cleanup() {
      if (admin === undefined) return;
      await admin.exec(`DROP SCHEMA ${schema} CASCADE`);
      await admin.dispose();
    },
  };
}

/** PGlite in a temporary folder. */
export function pgliteDb(): TestDb {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-pglite-'));
  return {
    name: 'pglite',
    client: () => PgliteClient.create(dir),
    cleanup: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  };
}

/** A payment event; override any field. */
export function payment(overrides: Partial<PaymentEvent> = {}): PaymentEvent {
  return {
    transactionId: 'tx-1',
    userId: 'user-1',
    amount: 1500,
    currency: 'EUR',
    merchantId: 'm-1',
    merchantCategory: '5411',
    country: 'FR',
    channel: 'web',
    timestamp: '2026-11-30T10:15:00Z',
    ...overrides,
  } as PaymentEvent;
}

/** A case to open; `decidedAt` ms since the epoch. */
export function newCase(
  tx: string,
  decidedAt: number,
  overrides: Partial<NewCase> = {},
  pay: Partial<PaymentEvent> = {},
): NewCase {
  return {
    transactionId: tx,
    payment: payment({ transactionId: tx, ...pay }),
    score: 0.42,
    decision: 'review',
    reasons: [{ code: 'amount', contribution: 1.2, description: 'the amount' }],
    rules: [{ id: 'large-amount-new-device', action: 'review' }],
    ruleErrors: [],
    model: { name: 'fraud', version: '1.0.0' },
    ruleset: { name: 'fraud-rules', version: '1.0.0' },
    profile: { id: 'default' },
    decidedAt,
    ...overrides,
  };
}

/**
 * A migrated case store on `db` for the enclosing suite: created in its `before`, disposed and removed in its
 * `after`. Call inside `describe`; read `.store` inside tests.
 */
export function suiteStore(db: TestDb): { readonly store: CaseStore } {
  let store: CaseStore | undefined;
  before(async () => {
    store = await SqlCaseStore.create(await db.client(), undefined, SHARED_WITH_CASES);
  });
  after(async () => {
    await store?.dispose();
    await db.cleanup();
  });
  return {
    get store(): CaseStore {
      if (store === undefined) throw new Error('the suite store is made in before()');
      return store;
    },
  };
}
