/**
 * Issue 36: after an overload episode whose clients go away mid-request, `npm start` serves again within 1 s.
 * The local host (`dist/local/main.js`, host.json's throttles: 64 executing, 2000 outstanding) takes 1,000
 * connections for 8 s from a load client in its own process (`./fixtures/overload-client`), which then drops
 * its sockets with requests in flight (waiting for a slot, reading the body, executing). Three rounds; after
 * each, liveness and a score must answer 200 within 1 s. Before the fix, a request whose client had gone kept
 * its execution slot forever: the first round wedged every function route, the next ones got 429.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exitOf, stopChild } from '../support/child-process';
import { eventually, within } from '../support/eventually';
import { type LocalHost, startLocalHost } from '../support/local-host';

const CLIENT = path.join(__dirname, 'fixtures', 'overload-client.js');
const PAYMENT = path.resolve(__dirname, '../../../examples/payment.json');
const CONNECTIONS = 1000;
const SECONDS = 8;
/** How soon the host must answer again after an episode, ms (the bound). */
const RECOVERY_MS = 1000;

let host: LocalHost;

before(async () => {
  host = await startLocalHost({ ms: 120_000 });
  // the host serves, and its model is warm, before any episode (and this process's fetch is warmed up), so
  // round 1 measures the recovery, not the start
  await eventually(
    async () => {
      const res = await fetch(`${host.url}/health/ready`);
      await res.arrayBuffer();
      return res.status;
    },
    (status) => status === 200,
    'readiness before the first episode',
    120_000,
  );
});

after(async () => {
  await stopChild(host.child, 'the local host to stop');
});

/** Runs one overload episode in its own process; resolves to its summary line. */
async function episode(round: number): Promise<string> {
  const origin = new URL(host.url).origin;
  const child = spawn(process.execPath, [CLIENT, origin, String(CONNECTIONS), String(SECONDS), PAYMENT], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await exitOf(child, `the load client of round ${round} to finish`, (SECONDS + 60) * 1000);
  assert.equal(code, 0, `the load client of round ${round} failed: ${out}`);
  return out.trim();
}

/** One request that must answer within {@link RECOVERY_MS}; resolves to its status. */
async function answer(what: string, url: string, init: RequestInit = {}): Promise<number> {
  const res = await within(
    fetch(url, { ...init, signal: AbortSignal.timeout(RECOVERY_MS + 500) }),
    `${what} to answer`,
    RECOVERY_MS,
  );
  await res.arrayBuffer();
  return res.status;
}

describe('the local host after an overload episode whose clients go away mid-request', () => {
  for (const round of [1, 2, 3]) {
    it(`serves liveness and a score again within 1 s (round ${round} of 3)`, async () => {
      const summary = await episode(round);
      const live = await answer(`liveness after round ${round} (${summary})`, `${host.url}/health/live`);
      assert.equal(live, 200, `liveness after round ${round}`);
      const score = await answer(`a score after round ${round}`, `${host.url}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: readFileSync(PAYMENT, 'utf8'),
      });
      assert.equal(score, 200, `a score after round ${round}`);
    });
  }
});
