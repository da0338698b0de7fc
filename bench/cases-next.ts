/**
 * `npm run bench:cases`: two hundred concurrent `POST /api/cases/next` against a queue of 1,000 open cases, through
 * the local host (a client in this process, the host in its own), on a database of its own on the PostgreSQL server
 * (bench/case-arms.ts). Every caller is another analyst (Easy Auth's principal, development identity). Reports how
 * many distinct cases were handed out, any handed out twice, the answers other than 200, and the wall time; repeated
 * `BENCH_CASES_ROUNDS` times (default 3) on a refilled queue. Writes bench/results/cases.json.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { NewCase } from '../lib/cases/case-store';
import { caseStore } from '../lib/cases/create-cases';
import { GOVERNANCE_MIGRATIONS } from '../lib/governance/migrations';
import { WEBHOOK_MIGRATIONS } from '../lib/webhooks/migrations';
import { loadConfig } from '../lib/config/config';
import { encodePrincipal } from '../lib/identity/principal';
import { caseDatabase } from './case-arms';
import { machine } from './machine';

const OPEN = 1000;
const CALLERS = 200;
const ROUNDS = Number(process.env['BENCH_CASES_ROUNDS'] ?? 3);
const root = path.resolve(__dirname, '../..');

function newCase(tx: string, decidedAt: number): NewCase {
  return {
    transactionId: tx,
    payment: {
      transactionId: tx,
      userId: `user-${tx}`,
      amount: 2500,
      currency: 'EUR',
      merchantId: 'm-1',
      merchantCategory: '5411',
      country: 'FR',
      channel: 'web',
      timestamp: new Date(decidedAt).toISOString(),
    },
    score: 0.4,
    decision: 'review',
    reasons: [],
    rules: [{ id: 'large-amount-new-device', action: 'review' }],
    ruleErrors: [],
    model: { name: 'fraud', version: '1.0.0' },
    decidedAt,
  };
}

/** Starts `npm start`'s host on a free port with `env`; resolves with its API URL and a stop. */
async function startHost(env: Record<string, string>): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [path.join(root, 'dist', 'local', 'main.js')], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the host did not listen within 120 s:\n${out}`)), 120_000);
    const on = (d: Buffer): void => {
      out += d.toString();
      const m = /Listening on (http:\/\/127\.0\.0\.1:\d+\/api)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (code) => reject(new Error(`the host exited (${code}) before listening:\n${out}`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function main(): Promise<void> {
  const db = await caseDatabase();
  const env = { ...db.env, IDENTITY_MODE: 'development', PG_POOL_MAX: '20' };
  const store = await caseStore(loadConfig({ ...process.env, ...env }), undefined, undefined, [
    GOVERNANCE_MIGRATIONS,
    WEBHOOK_MIGRATIONS,
  ]);
  if (store === undefined) throw new Error('no case store');
  const rounds: { distinct: number; twice: number; non_200: number; wall_ms: number }[] = [];
  let host: Awaited<ReturnType<typeof startHost>> | undefined;
  try {
    host = await startHost(env);
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = Date.now() - 10 * 86_400_000;
      for (let i = 0; i < OPEN; i += 250)
        await store.open(
          Array.from({ length: 250 }, (_, j) => newCase(`r${r}-${i + j}`, t0 + i + j)),
          Date.now(),
        );
      const url = host.url;
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: CALLERS }, async (_, i) => {
          const res = await fetch(`${url}/cases/next`, {
            method: 'POST',
            headers: { 'x-ms-client-principal': encodePrincipal(`analyst-${r}-${i}`, ['analyst']) },
          });
          const body = res.status === 200 ? ((await res.json()) as { case: { id: string } }) : undefined;
          return { status: res.status, id: body?.case.id };
        }),
      );
      const wall = performance.now() - started;
      const ids = answers.flatMap((a) => (a.id === undefined ? [] : [a.id]));
      rounds.push({
        distinct: new Set(ids).size,
        twice: ids.length - new Set(ids).size,
        non_200: answers.filter((a) => a.status !== 200).length,
        wall_ms: Math.round(wall),
      });
      // close the rest of the queue's round: the next round starts from 1,000 open cases again
      let left = (await store.list({ status: 'open' }, 'oldest', 1000)).cases.length;
      while (left > 0) {
        const more = await store.next('drain', Date.now());
        if (more === undefined) break;
        await store.close(more.id, 'drain', 'legit', undefined, Date.now());
        left--;
      }
      for (const c of (await store.list({ status: 'assigned' }, 'oldest', 1000)).cases)
        await store.close(c.id, 'drain', 'legit', undefined, Date.now());
      process.stdout.write(`round ${r + 1}: ${JSON.stringify(rounds.at(-1))}\n`);
    }
  } finally {
    await host?.stop();
    await store.dispose();
    await db.drop();
  }
  const worst = (k: 'distinct' | 'twice' | 'non_200', pick: (...v: number[]) => number): number =>
    pick(...rounds.map((x) => x[k]));
  const result = {
    machine: machine(),
    settings: { open_cases: OPEN, concurrent_callers: CALLERS, rounds: ROUNDS, pg_pool_max: 20 },
    cases: {
      next: {
        distinct_min: worst('distinct', Math.min),
        handed_out_twice_max: worst('twice', Math.max),
        non_200_max: worst('non_200', Math.max),
        wall_ms: rounds.map((x) => x.wall_ms),
        rounds,
      },
    },
  };
  const out = path.join(root, 'bench', 'results');
  await fs.mkdir(out, { recursive: true });
  await fs.writeFile(path.join(out, 'cases.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(
    `cases/next: ${CALLERS} concurrent callers over ${OPEN} open cases, ${ROUNDS} rounds: at least ` +
      `${result.cases.next.distinct_min} distinct, at most ${result.cases.next.handed_out_twice_max} handed out twice, ` +
      `${result.cases.next.non_200_max} answers other than 200; wall ${result.cases.next.wall_ms.join(', ')} ms\n` +
      'wrote bench/results/cases.json\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
