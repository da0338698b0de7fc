/**
 * Chaos on real servers (issue 36): `npm start` with its cases on a throwaway PostgreSQL cluster (started here on a
 * free port), loaded by a client in its own process with ~60 review-bound payments per second.
 *
 * - PostgreSQL stopped for 10 s in the middle of 25 s of load: every review answered 200 has its case within 60 s of
 *   PostgreSQL's return, and no transaction has two cases.
 * - With two worker processes (`FUNCTIONS_WORKER_PROCESS_COUNT=2`), the forked process's reviews reach the host's
 *   embedded bus (local/forwarding-bus.ts) and get their cases.
 * - PostgreSQL stopped, then the instance killed with SIGKILL mid-load (so the answered reviews since the stop are
 *   only in the embedded bus's journal), then both started again on the same `.data`: every review answered 200 has
 *   its case (docs/cases.md: the embedded bus takes a case before its payment is answered, so a kill loses none).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import { exitOf, stopChild } from '../support/child-process';
import { eventually, within } from '../support/eventually';
import { startLocalHost, type LocalHostSettings } from '../support/local-host';
import { PgCluster } from '../support/pg-cluster';

const CLIENT = path.join(__dirname, 'review-load-client.js');
const RATE = 60;

interface Answer {
  readonly tx: string;
  readonly status: number;
  readonly decision: string;
}

/** Starts the load client; `answers()` is what it has printed so far, `done` resolves (bounded) when it ends. */
function startLoad(url: string, seconds: number, prefix: string): { answers: () => Answer[]; done: Promise<Answer[]> } {
  const child: ChildProcess = spawn(process.execPath, [CLIENT, url, String(RATE), String(seconds), prefix], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const answers = (): Answer[] =>
    out
      .split('\n')
      .map((l) => l.split(' '))
      .filter((p) => p.length === 3)
      .map(([tx, status, decision]) => ({ tx: tx ?? '', status: Number(status), decision: decision ?? '' }));
  const done = exitOf(child, 'the load client to finish', (seconds + 90) * 1000).then((code) => {
    assert.equal(code, 0, 'the load client exits cleanly');
    assert.match(out, /DONE\n$/);
    return answers();
  });
  return { answers, done };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Transaction ids with a case, and those with more than one case or more than one `opened` event. */
async function casesIn(pg: PgCluster): Promise<{ ids: Set<string>; twice: string[] }> {
  const c = new Client({ host: '127.0.0.1', port: pg.port, user: 'postgres', database: 'postgres' });
  await c.connect();
  try {
    const ids = await c.query<{ transaction_id: string }>('SELECT transaction_id FROM cases');
    const twice = await c.query<{ transaction_id: string }>(
      `SELECT c.transaction_id FROM cases c JOIN case_events e ON e.case_id = c.id AND e.action = 'opened'
       GROUP BY c.transaction_id HAVING count(*) > 1
       UNION SELECT transaction_id FROM cases GROUP BY transaction_id HAVING count(*) > 1`,
    );
    return { ids: new Set(ids.rows.map((r) => r.transaction_id)), twice: twice.rows.map((r) => r.transaction_id) };
  } catch {
    return { ids: new Set(), twice: [] }; // not migrated yet
  } finally {
    await c.end();
  }
}

/** Waits (bounded by `ms`, named) until every transaction of `reviewed` has its case; asserts none has two. */
async function expectCases(pg: PgCluster, reviewed: readonly string[], ms: number, what: string): Promise<void> {
  const missing = async (): Promise<{ missing: string[]; twice: string[] }> => {
    const { ids, twice } = await casesIn(pg);
    return { missing: reviewed.filter((tx) => !ids.has(tx)), twice };
  };
  const r = await eventually(
    missing,
    (m) => m.missing.length === 0,
    `${what}: a case for each of the ${reviewed.length} reviews answered 200`,
    ms,
  );
  assert.deepEqual(r.twice, [], 'no transaction has two cases');
}

const reviewedOf = (answers: readonly Answer[]): string[] =>
  answers.filter((a) => a.status === 200 && a.decision === 'review').map((a) => a.tx);

describe('chaos: review cases under npm start when PostgreSQL stops and the instance is killed', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-chaos-cases-'));
  let pg: PgCluster;
  const settings = (bus: string): LocalHostSettings => ({
    set: {
      ...pg.env,
      BUS_JOURNAL_DIR: path.join(dir, bus),
      DECISION_LOG_DIR: path.join(dir, `decisions-${bus}`),
      LOG_LEVEL: 'warn',
    },
    unset: ['IDENTITY_MODE'],
    ms: 120_000,
  });

  before(async () => {
    pg = await PgCluster.create();
  });
  after(async () => {
    await pg.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('PostgreSQL stopped for 10 s under 60 reviews/s: every review answered 200 has one case within 60 s of its return', async () => {
    const host = await startLocalHost(settings('outage'));
    try {
      const load = startLoad(host.url, 25, 'outage');
      await sleep(8_000); // the scenario: load first, then the outage in the middle
      await within(pg.stop(), 'PostgreSQL to stop', 70_000);
      const answeredBeforeStop = reviewedOf(load.answers()).length;
      await sleep(10_000);
      await within(pg.start(), 'PostgreSQL to start again', 70_000);
      const back = Date.now();
      const answers = await load.done;
      const reviewed = reviewedOf(answers);
      assert.ok(answeredBeforeStop > 0 && reviewed.length > answeredBeforeStop, 'reviews answered before and during');
      // scoring never waits for PostgreSQL: a payment is refused only by admission (a busy machine), never for the cases
      const refused = answers.filter((a) => a.status !== 200 && !(a.status === 503 && a.decision === 'overloaded'));
      assert.deepEqual(refused, [], 'every payment answered 200 (or refused by admission) while PostgreSQL is down');
      await expectCases(pg, reviewed, Math.max(1, 60_000 - (Date.now() - back)), 'within 60 s of PostgreSQL’s return');
    } finally {
      await stopChild(host.child, 'npm start to exit after SIGTERM', 60_000);
    }
  });

  it('two worker processes: the reviews answered by the forked one have their cases too (sent to the host’s bus)', async () => {
    const s = settings('workers');
    const host = await startLocalHost({ ...s, set: { ...s.set, FUNCTIONS_WORKER_PROCESS_COUNT: '2' } });
    try {
      const answers = await startLoad(host.url, 6, 'workers').done;
      const reviewed = reviewedOf(answers);
      assert.ok(reviewed.length >= 20, `enough reviews answered to reach both processes (${reviewed.length})`);
      await expectCases(pg, reviewed, 60_000, 'with two worker processes');
    } finally {
      await stopChild(host.child, 'npm start to exit after SIGTERM', 60_000);
    }
  });

  it('SIGKILL mid-load while PostgreSQL is down, both started again on the same .data: every answered review has its case', async () => {
    const s = settings('kill');
    const first = await startLocalHost(s);
    let answers: Answer[];
    try {
      const load = startLoad(first.url, 12, 'kill');
      await sleep(3_000);
      await within(pg.stop(), 'PostgreSQL to stop', 70_000);
      await sleep(5_000); // reviews answered now have their case only in the bus journal
      first.child.kill('SIGKILL');
      await exitOf(first.child, 'the killed host to exit');
      answers = await load.done;
    } finally {
      first.child.kill('SIGKILL');
    }
    const reviewed = reviewedOf(answers);
    assert.ok(reviewed.length > 0, 'reviews were answered before the kill');
    assert.ok(
      answers.some((a) => a.status === 0),
      'the kill cut the load short (some payments got no answer)',
    );
    await within(pg.start(), 'PostgreSQL to start again', 70_000);
    const second = await startLocalHost(s);
    try {
      await expectCases(pg, reviewed, 60_000, 'after the restart on the same journal');
    } finally {
      await stopChild(second.child, 'npm start to exit after SIGTERM', 60_000);
    }
  });
});
