/**
 * What `npm run bench:cpu` needs to measure the case queue's cost (`cpu.marginal.cases`): the server of the arm
 * (the durable intake path: the embedded bus journalled on disk, delivered to the `caseIntake` function), a ruleset that sends
 * 10 % of the benchmark's payments to review (the shipped ruleset's lists and profiles with one rule on the amount:
 * the bodies of ./payment-body cycle through 500 amounts, 50 of them above 459), and a database of its own on the PostgreSQL
 * server the tests use (`BENCH_PG_HOST`, default 127.0.0.1; dropped at the end).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';

/** The `cases` arm's server: the service with the case intake path of `npm start` (./servers/service-cases). */
export const CASES_SERVER = 'servers/service-cases';

/** Writes the shipped ruleset with the 10 % review rule to a temporary rulesets folder; returns the folder. */
export async function reviewTenPercentRulesets(root: string, name = 'fraud-rules'): Promise<string> {
  const src = path.join(root, 'rulesets', name);
  const latest = (await fs.readdir(src))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .at(-1);
  if (latest === undefined) throw new Error(`no shipped ruleset under ${src}`);
  const doc = JSON.parse(await fs.readFile(path.join(src, latest), 'utf8')) as {
    rules: unknown[];
    golden: unknown[];
  };
  doc.rules.push({
    id: 'bench-review-10pct',
    description: 'bench: 10 % to review',
    when: 'event.amount > 459.0',
    action: 'review',
  });
  doc.golden = []; // the shipped cases do not know the extra rule
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-rulesets-'));
  await fs.mkdir(path.join(dir, name));
  await fs.writeFile(path.join(dir, name, latest), JSON.stringify(doc));
  return dir;
}

/** A fresh database for the case store on the PostgreSQL server: the settings that point at it, and its drop. */
export async function caseDatabase(): Promise<{
  env: Record<string, string>;
  /** Cases stored so far (the arm really wrote them). */
  count: () => Promise<number>;
  drop: () => Promise<void>;
}> {
  const host = process.env['BENCH_PG_HOST'] ?? '127.0.0.1';
  const user = process.env['BENCH_PG_USER'] ?? 'postgres';
  const database = `bench_cases_${process.pid}`;
  const admin = new Client({ host, user, database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  const journal = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-bus-'));
  return {
    env: {
      CASE_STORE: 'postgres',
      PG_HOST: host,
      PG_USER: user,
      PG_DATABASE: database,
      IDENTITY_MODE: 'disabled',
      BUS_JOURNAL_DIR: journal,
    },
    count: async () => {
      const c = new Client({ host, user, database });
      await c.connect();
      try {
        const r = await c.query<{ n: string }>('SELECT count(*) AS n FROM cases');
        return Number(r.rows[0]?.n ?? 0);
      } catch {
        return 0; // no table yet: nothing written
      } finally {
        await c.end();
      }
    },
    drop: async () => {
      await fs.rm(journal, { recursive: true, force: true });
      const c = new Client({ host, user, database: 'postgres' });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
